"""Main's answer for a small model: a short prompt in the chat template with the relevant
memory last; a question about the user whose reply lacks what memory holds is answered
from memory ("From memory: ..."); a reply that repeats an earlier one is detected."""

from __future__ import annotations

import pytest

from solace.conversation.answer import (
    GROUNDED_PREFIX,
    answer_with_memory,
    chat_prompt,
    echoes,
    find_grounding,
    grounded_reply,
    is_memory_question,
    is_repeat,
    noted_reply,
)
from solace.conversation.model import Fact, ThreadItem

FACTS = {k: Fact(k, v, i + 1, 0.0) for i, (k, v) in enumerate({
    "name": "Ada", "dog_name": "Rex", "allergy": "peanuts (severe)", "lives_in": "Lisbon",
    "job": "nurse", "favourite_colour": "green", "sister_name": "Maria"}.items())}


@pytest.mark.parametrize(("question", "key"), [
    ("What is my name?", "name"), ("What is my dog's name?", "dog_name"),
    ("What is my dog called?", "dog_name"), ("Am I allergic to anything?", "allergy"),
    ("Which food must I avoid?", "allergy"), ("Where do I live?", "lives_in"),
    ("What do I do for work?", "job"), ("What colour do I like best?", "favourite_colour"),
    ("What is my sister's name?", "sister_name"), ("Who is Maria?", "sister_name"),
])
def test_a_question_about_the_user_finds_the_fact_that_answers_it(question: str, key: str) -> None:
    assert is_memory_question(question, FACTS)
    found = find_grounding(question, FACTS)
    assert found is not None and found.key == key


@pytest.mark.parametrize("text", ["Tell me a joke.", "How can I sleep better?",
                                  "My dog's name is Rex.", "Recommend a book."])
def test_chat_and_statements_are_never_grounded(text: str) -> None:
    assert grounded_reply(text, "Sure!", FACTS) == ("Sure!", False)


def test_a_reply_without_the_fact_is_replaced_by_what_memory_holds() -> None:
    reply, grounded = grounded_reply("What is my dog's name?", "Hello! My name is Ada.", FACTS)
    assert grounded and reply == f"{GROUNDED_PREFIX} dog name: Rex."
    assert grounded_reply("What is my dog's name?", "Your dog is Rex.", FACTS) == (
        "Your dog is Rex.", False)
    assert grounded_reply("Who is Maria?", "Maria is your sister.", FACTS)[1] is False
    assert grounded_reply("What is my cat's name?", "I don't know.", {}) == (
        "I don't know.", False)


def test_without_a_fact_a_users_own_memory_line_grounds_the_answer() -> None:
    lines = ["user: We booked the cabin at Lake Tahoe for August.", "Mouth: Sounds lovely."]
    reply, grounded = grounded_reply("Where is my cabin booked?", "In Paris.", {}, lines)
    assert grounded and "Lake Tahoe" in reply and reply.startswith(GROUNDED_PREFIX)


def test_a_verbatim_repeat_is_detected_whatever_the_case_and_punctuation() -> None:
    assert is_repeat("Hello! I'm here to help.", ["hello, i'm here to help", "other"])
    assert not is_repeat("Hello! I'm here to help you.", ["Hello! I'm here to help."])
    assert not is_repeat("", [""])


def _items(*pairs: tuple[str, str]) -> list[ThreadItem]:
    return [ThreadItem(i + 1, 0.0, "message", role, text, "t1")  # type: ignore[arg-type]
            for i, (role, text) in enumerate(pairs)]


def test_chat_prompt_is_one_system_message_with_memory_last_then_recent_turns() -> None:
    thread = _items(("user", "one"), ("assistant", "r1"), ("user", "two"), ("assistant", "r2"),
                    ("user", "three"), ("assistant", "r3"), ("user", "What is my name?"))
    messages = chat_prompt(identity="You are Solace.", message="What is my name?",
                           facts=FACTS, memory=["user: I'm Ada."], thread=thread, exchanges=2)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant",
                                             "user"]
    system = messages[0]["content"]
    assert system.startswith("You are Solace.") and "- dog name: Rex" in system
    assert system.rstrip().endswith("- user: I'm Ada.")  # relevant memory last
    assert [m["content"] for m in messages[1:]] == ["two", "r2", "three", "r3",
                                                    "What is my name?"]
    bare = chat_prompt(identity="x", message="hi", facts={}, exchanges=0)
    assert [m["role"] for m in bare] == ["system", "user"]
    assert "nothing yet" in bare[0]["content"]


class Model:
    """Replies from a list; records (messages, temperature) per call."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[list[dict[str, str]], float]] = []

    async def __call__(self, messages: list, max_tokens: int, temperature: float) -> str:
        self.calls.append((messages, temperature))
        return self.replies.pop(0)


async def test_a_verbatim_repeat_is_retried_without_the_earlier_turns() -> None:
    thread = _items(("user", "Tell me a joke."), ("assistant", "Why did the cat sit?"),
                    ("user", "Another one."))
    model = Model("Why did the cat sit?", "A horse walks into a bar.")
    reply, how = await answer_with_memory(model, identity="x", message="Another one.",
                                          facts={}, thread=thread)
    assert (reply, how) == ("A horse walks into a bar.", "retry")
    (first, t0), (second, t1) = model.calls
    assert t0 == 0.0 and t1 > 0.0
    assert len(first) == 4 and len(second) == 2  # the retry has no earlier turns


async def test_a_question_about_the_user_is_grounded_and_a_stuck_model_never_repeats() -> None:
    model = Model("Hello! My name is Ada.")
    assert await answer_with_memory(model, identity="x", message="What is my dog's name?",
                                    facts=FACTS) == ("From memory: dog name: Rex.", "grounded")
    assert await answer_with_memory(Model("Rex!"), identity="x", message="Name my dog?",
                                    facts=FACTS, grounded=False) == ("Rex!", "model")
    thread = _items(("user", "hi"), ("assistant", "Hello."), ("user", "hi again"))
    reply, how = await answer_with_memory(Model("Hello.", "Hello!"), identity="x",
                                          message="hi again", facts={}, thread=thread)
    assert how == "stuck" and reply == 'I have no good answer to "hi again" yet.'


def test_a_stated_fact_the_reply_ignores_is_noted_and_noted_turns_are_not_replayed() -> None:
    facts = {"dog_name": Fact("dog_name", "Rex", 1, 0.0)}
    assert noted_reply("My dog's name is Rex.", "I love octopuses!", facts) == (
        "Noted: dog name: Rex.")
    assert noted_reply("My dog's name is Rex.", "Rex is a great name!", facts) is None
    assert noted_reply("I like tea.", "Nice.", facts) is None
    thread = _items(("user", "My dog's name is Rex."), ("assistant", "Noted: dog name: Rex."),
                    ("user", "What is it?"), ("assistant", "From memory: dog name: Rex."),
                    ("user", "Tell me a joke."), ("assistant", "Why did the dog sit?"))
    messages = chat_prompt(identity="x", message="Another", facts=facts, thread=thread)
    assert [m["content"] for m in messages[1:]] == ["Tell me a joke.", "Why did the dog sit?",
                                                    "Another"]


async def test_a_model_reply_in_memorys_voice_is_not_taken_as_memory() -> None:
    model = Model("From memory: book: The Nightingale.", "Try Dune.")
    assert await answer_with_memory(model, identity="x", message="Recommend a book.",
                                    facts={}) == ("Try Dune.", "retry")


def test_a_reply_that_mixes_up_facts_is_grounded() -> None:
    reply = "You have a name like Rex and Ada in your code!"
    assert grounded_reply("What is my dog's name?", reply, FACTS) == (
        "From memory: dog name: Rex.", True)
    assert grounded_reply("Is my dog Rex or Ada?", "Rex, not Ada.", FACTS)[1] is False


async def test_a_fact_asked_for_again_is_answered_again_but_never_verbatim() -> None:
    thread = _items(("user", "Where do I live?"), ("assistant", "From memory: lives in: Lisbon."),
                    ("user", "Where do I live?"))
    reply, how = await answer_with_memory(Model("Paris."), identity="x",
                                          message="Where do I live?", facts=FACTS, thread=thread)
    assert (reply, how) == ("From memory: lives in: Lisbon (as I said once before).", "grounded")


async def test_a_reply_echoing_the_prompt_is_not_usable() -> None:
    model = Model("What you know about the user:\n- name: Ada", "Hello Ada!")
    assert await answer_with_memory(model, identity="x", message="Hi", facts=FACTS) == (
        "Hello Ada!", "retry")


async def test_a_reply_recycling_a_sentence_of_an_earlier_one_is_retried() -> None:
    earlier = ["I'm glad to hear that! I'll make sure to remember your name and meet you."]
    assert echoes("Nice! I'll make sure to remember your name and meet you.", earlier)
    assert not echoes("I'll remember.", earlier)  # too short to be an echo
    model = Model("Great! I'll make sure to remember your name and meet you.", "Octopuses "
                  "have three hearts.")
    assert await answer_with_memory(model, identity="x", message="A fun fact?", facts={},
                                    earlier=earlier) == ("Octopuses have three hearts.", "retry")
