"""Topic titles come from the user's side of the thread, never the assistant's filler;
summaries keep the user's lines and the substance of the replies, not their filler."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from solace.conversation import Summariser
from solace.conversation.extractive import extractive_summary, topic_title, user_side_title
from solace.conversation.model import ThreadItem
from solace.conversation.testing import ScriptedLLM
from solace.models import Guard, WordPieceTokenizer

TOK = WordPieceTokenizer()
THREAD = [
    ("user", "I visited the Monterey Bay Aquarium with my daughter last weekend."),
    ("assistant", "The Monterey Bay Aquarium is a fantastic institution, truly wonderful! "
                  "That's a great question."),
    ("user", "The jellyfish exhibit was her favourite part."),
    ("assistant", "Jellyfish exhibits are amazing. I hope you had a lovely time!"),
    ("user", "We want to go back in March to see the otters."),
    ("assistant", "Sounds like a plan. Have fun."),
]


def items(thread: Sequence[tuple[str, str]] = THREAD) -> list[ThreadItem]:
    return [ThreadItem(i + 1, 0.0, "message", role, text, "t1")  # type: ignore[arg-type]
            for i, (role, text) in enumerate(thread)]


def test_deterministic_title_is_drawn_from_what_the_user_said() -> None:
    title = topic_title(items())
    user_words = " ".join(t for r, t in THREAD if r == "user").casefold()
    assert title and all(w.casefold() in user_words for w in title.split(", "))
    for filler in ("fantastic", "institution", "wonderful", "lovely"):
        assert filler not in title.casefold()


def test_deterministic_summary_drops_the_assistants_filler_sentences() -> None:
    summary = extractive_summary(items(), "", TOK, budget=200).summary
    assert "great question" not in summary and "Have fun" not in summary
    assert "lovely time" not in summary and "Sounds like a plan" not in summary
    assert "Monterey Bay Aquarium with my daughter" in summary  # the user's lead line


def test_a_model_title_copied_from_the_assistant_or_glued_is_refused() -> None:
    assert user_side_title("The Monterey Bay Aquarium is a fantastic institution", items()) == ""
    assert user_side_title("fantastic institution", items()) == ""
    glued = items([("user", "One thing about the trip: we leave at six.")])
    assert user_side_title("Thingabout trip", glued) == ""
    assert user_side_title("  Aquarium   visit. ", items()) == "Aquarium visit"
    assert user_side_title("Otters in March", items()) == "Otters in March"


def _llm(title: str) -> ScriptedLLM:
    def reply(messages: Sequence[Any]) -> dict[str, Any]:
        return {"title": title, "summary": "Aquarium visit with daughter; back in March.",
                "include_in_memory": False}
    return ScriptedLLM(reply)


def test_the_summariser_replaces_a_refused_model_title_with_the_users_words() -> None:
    bad = Summariser(_llm("The Monterey Bay Aquarium is a fantastic institution…"),
                     Guard(tokenizer=TOK), TOK, mode="llm").summarise(items())
    assert bad.mode == "llm" and bad.title == topic_title(items())
    assert "fantastic" not in bad.title
    good = Summariser(_llm("Aquarium trip"), Guard(tokenizer=TOK), TOK,
                      mode="llm").summarise(items())
    assert good.title == "Aquarium trip"
