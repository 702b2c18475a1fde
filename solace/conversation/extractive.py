"""The summariser's deterministic mode and its failure fallback: no model involved.

Extractive means every word of a title or summary comes from the thread, so nothing
can be invented. The title is the most frequent content words of the user's side of
the thread (what the topic is about is what the user brought up; an assistant's
"fantastic institution" is filler); the summary keeps the sentences that carry
decisions, preferences, standing facts and names, numbers or dates, in thread order,
within a token budget, and drops the assistant's sentences that carry none of them;
``include_in_memory`` is a rule: the thread states a decision, a preference or a
standing fact. :func:`user_side_title` checks a model's title the same way.

The fallback is what a *failed* LLM call gets (seed: "generated deterministically
from the first user message"); it never promotes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from solace.conversation.model import ThreadItem
from solace.models.entities import salient
from solace.models.tokenizer import Tokenizer

__all__ = [
    "DURABLE_PATTERNS",
    "Extract",
    "durable_sentences",
    "extractive_summary",
    "fallback_summary",
    "sentences",
    "topic_title",
    "user_side_title",
]

#: Sentence patterns that make a conversation worth remembering across sessions.
DURABLE_PATTERNS: dict[str, re.Pattern[str]] = {
    "decision": re.compile(
        r"\b(decided|decide to|we'll go with|let's go with|going with|settled on|agreed|"
        r"the plan is|final decision|we will use|we'll use|let's use|chose|opted for)\b",
        re.IGNORECASE,
    ),
    "preference": re.compile(
        r"\b(i prefer|i'd prefer|i'd rather|i always|i never|i hate|i don't like|"
        r"i do not like|i dislike|my favou?rite|please always|please never|"
        r"don't ever|i want you to)\b",
        re.IGNORECASE,
    ),
    "fact": re.compile(
        r"\b(my name is|call me|i live in|i work (?:at|for|as)|i'm allergic|i am allergic|"
        r"my (?:wife|husband|partner|son|daughter|birthday|email|address|phone|team|"
        r"company|job|boss) (?:is|was)|remember that|don't forget|keep in mind|"
        r"for future reference|from now on)\b",
        re.IGNORECASE,
    ),
}

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_STOP = frozenset(
    """the and for that this with you your are was were have has had not but they them
    their what when where which who why how can could would should will just like really
    about from into over also been being there here then than some any all its it's i'm
    i've i'll i'd you're we're that's don't didn't doesn't can't won't isn't wasn't yeah yes
    okay well very much more most so too our ours out get got going know think want need
    sure thanks thank great good nice cool let's lets one two did does doing make made
    see way time yet now today something anything everything thing things maybe still
    even back said say tell told hey hello wow oh gonna pretty lot lots always never
    user assistant tool result call""".split()
)

TITLE_WORDS = 4
TITLE_MAX_WORDS = 8  # a model's title longer than this is a sentence, not a label
SUMMARY_TOKENS = 60
FALLBACK_WORDS = 40
NEAR_DUPLICATE = 0.6  # word-set Jaccard at which a sentence repeats a chosen one


@dataclass(frozen=True, slots=True)
class Extract:
    """A deterministic title, summary and memory decision."""

    title: str
    summary: str
    include_in_memory: bool


def sentences(text: str) -> list[str]:
    """Split ``text`` into trimmed, non-empty sentences."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def durable_sentences(texts: Sequence[str]) -> list[str]:
    """The sentences of ``texts`` stating a decision, a preference or a standing fact."""
    return [
        s for text in texts for s in sentences(text)
        if any(p.search(s) for p in DURABLE_PATTERNS.values())
    ]


def _title(texts: Sequence[str]) -> str:
    counts: Counter[str] = Counter()
    first: dict[str, tuple[int, str]] = {}
    for text in texts:
        for match in _WORD.finditer(text):
            word = match.group(0)
            key = word.casefold().strip("'-")
            if key in _STOP or len(key) < 3:
                continue
            counts[key] += 1
            first.setdefault(key, (len(first), word))
    if not counts:
        return ""
    top = sorted(counts, key=lambda k: (-counts[k], first[k][0]))[:TITLE_WORDS]
    return ", ".join(first[k][1] for k in sorted(top, key=lambda k: first[k][0]))


def _title_texts(messages: Sequence[ThreadItem], notes: str) -> list[str]:
    """What a title is drawn from: the user's messages and the notes; the assistant's
    only when the user said nothing with a content word."""
    user = [m.content for m in messages if m.role == "user"] + ([notes] if notes.strip() else [])
    if _title(user):
        return user
    return [m.content for m in messages]


def topic_title(items: Sequence[ThreadItem], notes: str = "") -> str:
    """The deterministic title: the user's most frequent content words ("" if none)."""
    return _title(_title_texts(_messages(items), notes))


def _content_words(text: str) -> list[str]:
    return [w for w in (m.group(0).casefold().strip("'-") for m in _WORD.finditer(text))
            if w not in _STOP and len(w) >= 3]


def user_side_title(title: str, items: Sequence[ThreadItem], notes: str = "") -> str:
    """``title`` tidied if it is a label drawn from the user's side of the thread, else "".

    Refused: a sentence rather than a label (more than :data:`TITLE_MAX_WORDS`
    words), a word glued from two of the thread's words ("thingabout"), and a
    title copied from the assistant (under two thirds of its content words that
    occur in the thread occur in what the user said or noted). Words the thread
    lacks are the guard's business (it refuses invented names and numbers); a
    paraphrase such as "choice" for "chose" is allowed. Whitespace is normalised
    and trailing punctuation dropped.
    """
    title = " ".join(title.split()).strip(" .,;:!?\"'…")
    if not title or len(title.split()) > TITLE_MAX_WORDS:
        return ""
    messages = _messages(items)
    every = " ".join(m.content for m in messages) + " " + notes
    thread_words = {w.casefold() for w in re.findall(r"[A-Za-z]+", every)}
    thread = set(_content_words(every))
    user = set(_content_words(
        " ".join(m.content for m in messages if m.role == "user") + " " + notes
    ))
    words = _content_words(title)
    if any(w not in thread_words and _glued(w, thread_words) for w in words):
        return ""
    known = [w for w in words if w in thread]
    if known and sum(w in user for w in known) * 3 < len(known) * 2:
        return ""
    return title


def _glued(word: str, vocabulary: set[str]) -> bool:
    """True if ``word`` is two of ``vocabulary``'s words run together."""
    return any(
        word[:i] in vocabulary and word[i:] in vocabulary for i in range(2, len(word) - 1)
    )


def _messages(items: Sequence[ThreadItem]) -> list[ThreadItem]:
    return [i for i in items if i.kind == "message" and i.content.strip()]


def extractive_summary(
    items: Sequence[ThreadItem], notes: str, tokenizer: Tokenizer, *, budget: int = SUMMARY_TOKENS
) -> Extract:
    """Deterministic mode: an extractive title and summary and a rule-based flag.

    Guarantees: every sentence of the summary occurs verbatim in the thread or its
    notes; the summary has at most ``budget`` tokens unless its first sentence alone
    is longer (then that sentence is cut at a word boundary); same input, same output.
    """
    messages = _messages(items)
    texts = [m.content for m in messages] + ([notes] if notes.strip() else [])
    candidates: list[tuple[float, int, str]] = []
    position = 0
    lead_done = False
    for message in messages:
        for sentence in sentences(message.content):
            score = 0.0
            if any(p.search(sentence) for p in DURABLE_PATTERNS.values()):
                score += 2.0
            score += min(len(salient(sentence)), 2) * 0.75
            if message.role != "user" and score <= 0.75 and _filler(sentence):
                position += 1
                continue  # the assistant's filler: no decision, fact, name or number
            if message.role == "user":
                score += 0.5
                if not lead_done:  # the first user sentence says what the topic is
                    score += 1.5
                    lead_done = True
            candidates.append((score, position, f"{message.role}: {sentence}"))
            position += 1
    for sentence in sentences(notes):
        candidates.append((1.5, position, f"note: {sentence}"))
        position += 1
    chosen: list[tuple[int, str]] = []
    seen: list[set[str]] = []
    used = 0
    for _score, pos, sentence in sorted(candidates, key=lambda c: (-c[0], c[1])):
        words = set(_WORD.findall(sentence.casefold()))
        if any(_jaccard(words, other) >= NEAR_DUPLICATE for other in seen):
            continue  # a repeated point costs tokens and says nothing new
        cost = tokenizer.count(sentence) + 1
        if used + cost > budget:
            if chosen:
                continue
            sentence = _cut_words(sentence, budget, tokenizer)
            cost = budget
        chosen.append((pos, sentence.rstrip(".;")))
        seen.append(words)
        used += cost
    summary = "; ".join(s for _, s in sorted(chosen))
    include = bool(durable_sentences(texts))
    return Extract(_title(_title_texts(messages, notes)), summary, include)


def _filler(sentence: str) -> bool:
    """True for a sentence with no decision, number, date or name other than its
    capitalised first word ("Sounds like a plan.")."""
    if any(p.search(sentence) for p in DURABLE_PATTERNS.values()):
        return False
    found = salient(sentence)
    if found.numbers or found.dates:
        return False
    first = sentence.split(maxsplit=1)[0].strip(".,;:!?\"'").casefold() if sentence else ""
    return not (found.names - {first})


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _cut_words(text: str, budget: int, tokenizer: Tokenizer) -> str:
    words = text.split()
    while len(words) > 1 and tokenizer.count(" ".join(words)) > budget:
        words = words[: max(1, len(words) * 3 // 4)]
    return " ".join(words)


def fallback_summary(items: Sequence[ThreadItem]) -> Extract:
    """The seed's fallback for a failed call: title and summary from the first user
    message (the first message if no user spoke); ``include_in_memory`` is False."""
    messages = _messages(items)
    firsts = [m for m in messages if m.role == "user"] or messages
    if not firsts:
        return Extract("untitled", "", False)
    words = firsts[0].content.split()
    title = " ".join(words[:8]).rstrip(".,;:!?") + ("…" if len(words) > 8 else "")
    summary = " ".join(words[:FALLBACK_WORDS]) + ("…" if len(words) > FALLBACK_WORDS else "")
    return Extract(title, summary, False)
