"""Main's prompt for a small chat model, and the checks its reply passes before it is said.

A 135M model (SmolLM2) answers well only from a short prompt in its own chat
template: one system message (who it is, what it knows about the user, the few
memory lines relevant to this message *last*, nearest the question), the last few
exchanges, and the message. :func:`chat_prompt` builds exactly that.

It still invents, and it copies its earlier replies. So a reply is checked:

* :func:`grounded_reply` — for a question about the user ("What is my dog's name?")
  whose answer memory holds (a durable fact, or a line the user said), a reply that
  does not contain it is replaced by what memory holds: ``From memory: dog name:
  Rex.`` Main says what it knows rather than inventing.
* :func:`is_repeat` — a reply identical to one already given in the thread is a
  loop, not an answer; the caller retries or says something else.

All functions are pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from solace.conversation.model import Fact, ThreadItem
from solace.conversation.statements import facts_from_statement
from solace.models.llm import ChatMessage

__all__ = [
    "GROUNDED_PREFIX",
    "NOTED_PREFIX",
    "REPLY_TOKENS",
    "Grounding",
    "answer_with_memory",
    "chat_prompt",
    "find_grounding",
    "grounded_reply",
    "is_memory_question",
    "echoes",
    "is_repeat",
    "noted_reply",
]

GROUNDED_PREFIX = "From memory:"
NOTED_PREFIX = "Noted:"
CHAT_RULES = (
    "Reply in one or two short sentences. When the user asks about themselves, answer "
    "from 'What you know about the user'; if it is not there, say you don't know. "
    "Never make up facts about the user, and never repeat an earlier reply."
)

REPLY_TOKENS = 80
"""The token cap of a chat reply: two short sentences, and a bounded latency."""
RETRY_TEMPERATURE = 0.7

_WORD = re.compile(r"[a-z0-9]+")
_QUESTION_START = re.compile(
    r"^\s*(what|what's|whats|where|who|which|when|how|do|does|did|am|is|are|can|could|tell me)\b",
    re.IGNORECASE,
)
_ABOUT_USER = re.compile(r"\b(my|i|me|i'm|am i|do i|mine)\b", re.IGNORECASE)
_GENERIC = frozenset(
    """what whats where who which when how do does did am is are can could tell me my i
    the a an of to you your remember know again please name called s it its mine""".split()
)
#: Words a question uses for a fact whose key does not contain them.
ALIASES: Mapping[str, frozenset[str]] = {
    "allergy": frozenset({"allergic", "allergy", "allergies", "avoid", "food", "eat"}),
    "lives_in": frozenset({"live", "living", "city", "town", "home", "where"}),
    "from": frozenset({"from", "grow", "grew", "come", "born"}),
    "works_at": frozenset({"work", "company", "employer", "office"}),
    "job": frozenset({"job", "work", "occupation", "profession", "do"}),
    "age": frozenset({"old", "age"}),
    "birthday": frozenset({"birthday", "born"}),
    "name": frozenset({"name", "called", "who"}),
}


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold().replace("'s", " "))


def _norm(text: str) -> str:
    return " ".join(_words(text))


def is_repeat(reply: str, earlier: Sequence[str]) -> bool:
    """True if ``reply`` says word for word what one of ``earlier`` said (case and
    punctuation aside)."""
    key = _norm(reply)
    return bool(key) and any(key == _norm(e) for e in earlier)


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
ECHO_WORDS = 6


def echoes(reply: str, earlier: Sequence[str]) -> bool:
    """True if a sentence of ``reply`` of at least :data:`ECHO_WORDS` words was said,
    word for word, in one of ``earlier`` (a small model recycling its last reply:
    "I'll make sure to remember your name, and I'd love ...")."""
    said = {_norm(s) for e in earlier for s in _SENTENCE.split(e)}
    return any(
        len(_words(s)) >= ECHO_WORDS and _norm(s) in said for s in _SENTENCE.split(reply)
    )


def is_memory_question(text: str, facts: Mapping[str, Fact] | None = None) -> bool:
    """True for a question about the user ("What is my name?", "Where do I live?"),
    or one naming something a fact holds ("Who is Maria?")."""
    if not (text.rstrip().endswith("?") or _QUESTION_START.match(text)):
        return False
    if _ABOUT_USER.search(text):
        return True
    words = set(_words(text))
    return any(set(_words(f.value)) & words - _GENERIC for f in (facts or {}).values())


@dataclass(frozen=True, slots=True)
class Grounding:
    """What memory holds for a question: a fact (``key``/``value``) or a user line."""

    key: str
    value: str
    score: float

    @property
    def text(self) -> str:
        """The grounded reply: ``From memory: <key>: <value>.``"""
        label = self.key.replace("_", " ")
        body = f"{label}: {self.value}" if label else self.value
        return f"{GROUNDED_PREFIX} {body.rstrip('.')}."


def _key_words(key: str) -> set[str]:
    words = set(key.split("_"))
    for alias_key, aliases in ALIASES.items():
        if key == alias_key or key.endswith(f"_{alias_key}"):
            words |= aliases
    if key.startswith("favourite_"):
        words |= {"favourite", "favorite", "best", "like", "colour", "color"}
    return words


def find_grounding(
    question: str, facts: Mapping[str, Fact], lines: Sequence[str] = ()
) -> Grounding | None:
    """The durable fact (or, failing that, the user's own memory line) that answers
    ``question``, or None.

    A fact scores the question's words found in its key, its key's aliases or its
    value; the more specific key wins a tie ("my dog's name" is ``dog_name``, not
    ``name``). A question naming a fact's value asks what it is ("Who is Maria?"
    -> ``sister_name: Maria``). ``lines`` (``user: ...`` memory lines) are used only
    when no fact scores.
    """
    asked = set(_words(question)) - {"s"}
    best: Grounding | None = None
    for key in sorted(facts):
        fact = facts[key]
        key_hits = asked & _key_words(key) - (_GENERIC - {"name", "called", "who"})
        generic_only = not (key_hits - {"name", "called", "who"})
        value_hits = asked & set(_words(fact.value)) - _GENERIC
        score = len(key_hits) + 2 * len(value_hits)
        if generic_only and not value_hits and key != "name":
            score = 0  # "my name" is not "my sister's name"
        if key == "name" and asked & {"dog", "cat", "sister", "brother", "wife", "husband",
                                      "partner", "son", "daughter", "mother", "father",
                                      "friend", "boss", "pet"}:
            score = 0
        if score <= 0:
            continue
        candidate = Grounding(key, fact.value, score + len(key.split("_")) * 0.01)
        if best is None or candidate.score > best.score:
            best = candidate
    if best is not None:
        return best
    content = asked - _GENERIC
    for line in lines:
        speaker, _, said = line.partition(": ")
        if speaker.strip("- ") != "user" or said.rstrip().endswith("?"):
            continue
        overlap = content & set(_words(said))
        if len(overlap) >= 2 or (overlap and len(content) == 1):
            return Grounding("", f'you said "{said.strip()}"', float(len(overlap)))
    return None


def grounded_reply(
    question: str, reply: str, facts: Mapping[str, Fact], lines: Sequence[str] = ()
) -> tuple[str, bool]:
    """``(reply, grounded)``: the model's reply if it holds what memory holds for a
    question about the user and no other fact's value it was not asked about (or the
    message is no such question, or memory holds nothing for it); otherwise what
    memory holds, and True. ("Your dog is Rex and you are Ada" to "What is my dog's
    name?" mixes facts up: it is grounded.)"""
    if not is_memory_question(question, facts):
        return reply, False
    found = find_grounding(question, facts, lines)
    if found is None:
        return reply, False
    if found.key:
        said = set(_words(reply))
        asked = set(_words(question))
        if set(_words(found.value)) & asked and not set(found.key.split("_")) & asked:
            # "Who is Maria?": the answer is the key ("sister"), not the value
            label = found.key.removesuffix("_name").replace("_", " ")
            return (reply, False) if label in _norm(reply) else (found.text, True)
        others = [f.value for k, f in facts.items() if k != found.key
                  and not set(_words(f.value)) & set(_words(question))]
        confused = any(set(_words(v)) <= said for v in others if _words(v))
        if set(_words(found.value)) <= said and not confused:
            return reply, False
    return found.text, True


def _without_memory_replies(said: Sequence[ThreadItem]) -> list[ThreadItem]:
    """The turns without the exchanges Main answered from memory or by noting a fact:
    a small model shown them imitates their form ("From memory: book: ...")."""
    out: list[ThreadItem] = []
    for item in said:
        if item.role == "assistant" and item.content.startswith((GROUNDED_PREFIX, NOTED_PREFIX)):
            if out and out[-1].role == "user":
                out.pop()
            continue
        out.append(item)
    return out


def noted_reply(message: str, reply: str, facts: Mapping[str, Fact]) -> str | None:
    """For a message stating facts about the user that memory now holds: None if the
    reply mentions each stated value, else ``Noted: <key>: <value>; ...``."""
    stated = {k: v for k, v in facts_from_statement(message).items()
              if k in facts and facts[k].value == v}
    if not stated:
        return None
    words = set(_words(reply))
    if all(set(_words(v)) <= words for v in stated.values()):
        return None
    body = "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in sorted(stated.items()))
    return f"{NOTED_PREFIX} {body}."


def chat_prompt(
    *,
    identity: str,
    message: str,
    facts: Mapping[str, Fact],
    memory: Sequence[str] = (),
    thread: Sequence[ThreadItem] = (),
    exchanges: int = 2,
    extra: str = "",
) -> list[ChatMessage]:
    """The messages for a small chat model, in its chat template's roles.

    Args:
        identity: who the assistant is (one or two sentences).
        message: the user's message being answered (sent last).
        facts: the scope's durable facts (all of them: they are few and exact).
        memory: the memory lines recalled for this message, best first; they go
            last in the system message, nearest the question.
        thread: the active topic's thread; its last ``exchanges`` user/assistant
            pairs before ``message`` are replayed as chat turns.
        extra: anything else the system message carries (e.g. notes), before memory.
    """
    known = "\n".join(f"- {k.replace('_', ' ')}: {facts[k].value}" for k in sorted(facts))
    parts = [identity.strip(), CHAT_RULES]
    parts.append(f"What you know about the user:\n{known or '- nothing yet'}")
    if extra.strip():
        parts.append(extra.strip())
    if memory:
        parts.append("Relevant memories:\n" + "\n".join(f"- {m}" for m in memory))
    messages: list[ChatMessage] = [{"role": "system", "content": "\n\n".join(parts)}]
    said = [i for i in thread if i.kind == "message" and i.role in ("user", "assistant")]
    if said and said[-1].role == "user" and said[-1].content.strip() == message.strip():
        said = said[:-1]  # the message itself goes last, once
    said = _without_memory_replies(said)
    starts = [n for n, i in enumerate(said) if i.role == "user"]
    recent = said[starts[-exchanges]:] if exchanges > 0 and len(starts) >= exchanges else (
        said if exchanges > 0 else [])
    messages += [{"role": i.role, "content": i.content} for i in recent]
    messages.append({"role": "user", "content": message})
    return messages


_PROMPT_HEADERS = ("What you know about the user", "Relevant memories:", CHAT_RULES[:40])


def _said_before(text: str, earlier: Sequence[str]) -> str:
    """``text``, saying how often it was said before when it was (a fact asked for
    again is answered again, but never as a verbatim repeat)."""
    times = sum(1 for e in earlier if _norm(e).startswith(_norm(text)))
    if times == 0:
        return text
    return f"{text.rstrip('.')} (as I said {'once' if times == 1 else f'{times} times'} before)."


Complete = Callable[[list[ChatMessage], int, float], Awaitable[str]]
How = Literal["model", "retry", "grounded", "noted", "stuck"]


async def answer_with_memory(
    complete: Complete,
    *,
    identity: str,
    message: str,
    facts: Mapping[str, Fact],
    memory: Sequence[str] = (),
    thread: Sequence[ThreadItem] = (),
    tidy: Callable[[str], str | None] = lambda raw: raw.strip() or None,
    grounded: bool = True,
    earlier: Sequence[str] | None = None,
    prompt: Sequence[ChatMessage] | None = None,
) -> tuple[str, How]:
    """Ask the model with :func:`chat_prompt`, then make sure the reply is usable.

    Args:
        complete: ``await complete(messages, max_tokens, temperature)`` -> raw reply
            (the caller runs the blocking model off the event loop; a ``ModelError``
            propagates).
        identity, message, facts, memory, thread: as for :func:`chat_prompt`.
        tidy: cleans a raw reply (cuts loops); None means nothing usable.
        grounded: apply :func:`grounded_reply` (off: the model alone).
        earlier: the replies already given (default: the assistant messages of
            ``thread``); pass the whole session's so a topic change or a restart
            does not hide them.
        prompt: the messages of the first ask, if not :func:`chat_prompt`'s (a capable
            model gets the whole context stack); the retry always uses the short one.

    Returns:
        ``(reply, how)``: ``model`` (first reply kept), ``retry`` (the first was empty,
        degenerate, a verbatim repeat of an earlier reply or :func:`echoes` one; a
        second one, asked without the earlier turns at a higher temperature and not
        a verbatim repeat, was kept),
        ``grounded`` (what memory holds replaced a reply lacking it), ``noted``
        (the message stated facts memory now holds and the reply did not take them
        up: ``Noted: <key>: <value>.``), ``stuck`` (no usable, new reply: a reply
        naming the message, so it is never a repeat). A reply in memory's own voice
        (``From memory:``) from the model is not usable.
    """
    if earlier is None:
        earlier = [i.content for i in thread if i.kind == "message" and i.role == "assistant"]
    said = list(earlier)

    def usable(raw: str, *, strict: bool) -> str | None:
        text = tidy(raw)
        if text is None or text.startswith((GROUNDED_PREFIX, NOTED_PREFIX)):
            return None  # a model imitating memory's voice is not memory speaking
        if any(header in text for header in _PROMPT_HEADERS):
            return None  # the prompt echoed back
        if is_repeat(text, said) or (strict and echoes(text, said)):
            return None
        return text

    how: How = "model"
    messages = list(prompt) if prompt is not None else chat_prompt(
        identity=identity, message=message, facts=facts, memory=memory, thread=thread)
    reply = usable(await complete(messages, REPLY_TOKENS, 0.0), strict=True)
    if reply is None:
        how = "retry"
        bare = chat_prompt(identity=identity, message=message, facts=facts, memory=memory,
                           thread=thread, exchanges=0)
        reply = usable(await complete(bare, REPLY_TOKENS, RETRY_TEMPERATURE), strict=False)
    if grounded:
        text, used = grounded_reply(message, reply or "", facts, memory)
        if used:
            return _said_before(text, said), "grounded"
        noted = noted_reply(message, reply or "", facts)
        if noted is not None:
            return _said_before(noted, said), "noted"
    if reply is None:
        return f'I have no good answer to "{" ".join(message.split())[:120]}" yet.', "stuck"
    return reply, how
