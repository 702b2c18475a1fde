"""The deterministic fact extractor: one exchange distilled into a few third-person facts.

Used when a store's ``extraction_mode`` is ``rules`` (the default), and as the
fallback when LLM extraction is unavailable or fails the guard. It reads mostly the
user's message, sentence by sentence and clause by clause, with fixed patterns for
preferences, identity, relationships, plans, possessions, obligations, notable
events and corrections. A matched clause becomes a fact in the third person ("I
moved to Berlin last month" said by Ana on 8 May 2023 -> "Ana moved to Berlin in
April 2023"), with relative dates resolved the way the memory ladder resolves them.

Guarantees: pure and deterministic (same exchange, same facts); at most ``limit``
facts, ordered by importance (ties by position); a fact's words all come from the
exchange, the speaker's name, or the pattern's fixed verbs ("prefers", "'s name
is"); questions, greetings and chit-chat yield nothing. The assistant's reply only
contributes what it explicitly confirms about the user ("Noted, you prefer ...");
tool results only contribute dated obligations and plans ("invoice due 2027-03-01").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from solace.conversation.statements import facts_from_statement
from solace.facts.antecedents import relative_named, with_antecedent
from solace.facts.extract_patterns import (
    CATEGORIES,
    CONFIRM,
    CONJUNCTION_END,
    CORRECTION,
    DATED_BONUS,
    DROPPED_SUBJECT,
    EMPTY_OBJECTS,
    FIRST_PERSON,
    IMPORTANCE,
    KINDS,
    LEADING,
    MODIFIERS,
    NOT_BUT,
    OBJECT_RELATIVE,
    REL_NORMAL,
    RELATIVE_ACTS,
    REQUESTS,
    RULES,
    SCHEDULE,
    SPLIT_AT,
    STRONG_CORRECTION,
    SUBJECTIVE,
    TIME_FIRST,
    TRAIL,
    UPDATES,
    VALUE_KINDS,
)
from solace.facts.model import Candidate, Exchange
from solace.memory.ladder.dates import resolve_relative_dates
from solace.memory.ladder.pronouns import resolve_pronouns
from solace.memory.ladder.sentences import split_clauses, split_sentences
from solace.memory.lexical import content_words, stem
from solace.models.entities import number_values, salient

__all__ = ["IMPORTANCE", "KINDS", "extract_facts"]


@dataclass(frozen=True, slots=True)
class _Found:
    kind: str
    slot: str
    text: str
    dated: bool
    order: int


def _subject(exchange: Exchange) -> str:
    return exchange.speaker.strip() or "the user"


def _head(obj: str) -> str:
    """The first content word of ``obj`` (stemmed) that names a thing: not a modifier,
    not an empty word, not a number ("two cats" is about cats)."""
    words = [w for w in content_words(obj) if w not in EMPTY_OBJECTS and w not in MODIFIERS
             and not w.isdigit() and not number_values(w)]
    return stem(words[0]) if words else ""


_NOW_TWICE = re.compile(r"(?i)(\bis now\b.*?)\s+now\b")
_UPDATE_HINTS = frozenset(("switch", "no longer", "moved", "value", "brand"))
# Who must be named (capitalised in the clause) for the rule to hold: "I'm with Sam
# now" is a partner, "I'm with you" is not; "my car is a Honda", not "my life is a mess".
_NAMED_GROUP = {"partner": "obj", "brand": "value"}
_DEADLINE_OF = re.compile(r"^(?:the\s+)?(?:deadline|due\s+date)\s+(?:for|of)\s+")


def _update_slot(kind: str, hint: str, obj: str, exchange: Exchange,
                 context: str = "") -> tuple[str, str]:
    """``(kind, slot)`` for the update rules, the slot the earlier value's rule gives.

    ``context`` is the whole match: a switch "from coffee to X" is about a drink.
    """
    if hint == "switch":
        head = _head(obj)
        for category, words in CATEGORIES.items():
            if head in words or any(w in words for w in content_words(context or obj)):
                return kind, f"preference:{category}"
        return kind, f"preference:{head}" if head else "preference"
    if hint == "no longer":  # the slot of the positive statement: "no longer work at X"
        stated = _statement_facts(f"I {obj}", exchange, 0)
        if stated:
            return kind, stated[0].slot
        for other_kind, other_hint, pattern in RULES:
            for positive in (f"i {obj}", f"i'm {obj}"):
                match = pattern.search(positive)
                if match is not None and other_hint not in ("no longer", "switch"):
                    return kind, _slot(other_kind, other_hint, match, _head(obj))
        return kind, f"identity:{_head(obj)}"
    if hint == "moved":  # "they pushed my tax report deadline to ...": the thing moved
        thing = _DEADLINE_OF.sub("", re.sub(r"^(?:my|our|the)\s+", "", obj))
        if re.search(r"\b(?:deadline|due)\b", obj):
            kind = "obligation"
        return kind, f"{kind}:{_head(thing)}"
    return kind, f"{kind}:{_head(obj)}"  # "value", "brand": my <thing> is ...


def _clauses(sentence: str) -> Iterator[str]:
    """Clauses of one sentence; a piece without a subject of its own ("and Panda",
    "reading, or playing my violin") stays with the clause before it."""
    pieces: list[str] = []
    for piece in split_clauses(sentence):
        if pieces and (not SUBJECTIVE.search(piece) or re.match(r"(?i)(?:and|or)\b", piece)
                       and not FIRST_PERSON.search(piece)):
            joiner = " " if re.match(r"(?i)(?:and|or)\b", piece) else ", "
            pieces[-1] = f"{pieces[-1]}{joiner}{piece}"
        else:
            pieces.append(piece)
    yield from pieces


def _third_person(clause: str, exchange: Exchange) -> str:
    text = resolve_relative_dates(clause, exchange.ts)
    name = _subject(exchange)
    text = re.sub(r"(?i)\b(we|they)'re\b", r"\1 are", text)
    text = re.sub(r"(?i)\bI\s+are\b", "I am", text)  # "my wife and I are" after the split
    text, _ = resolve_pronouns(text, name, "the assistant")
    text = re.sub(r"(?i)^we\b", f"{name} and others", text)  # "we" alone names no one
    text = re.sub(r"(?i)\bour\b", f"{name}'s", text)
    text = _AGREE.sub(_agree, text)  # "Rosa no longer work at" -> "... works at"
    text = TRAIL.sub("", text).strip(" ,;:'\"")
    return text[:1].upper() + text[1:]


# A bare verb after the speaker's name and an adverb the pronoun rules do not know.
_AGREE = re.compile(r"^(\S+(?:\s+(?:no\s+longer|mostly|only|now|usually))*\s+)"
                    r"(drink|eat|work|live|drive|own|use|play|go|do|have|order)\b")


def _agree(match: re.Match[str]) -> str:
    verb = match[2]
    third = {"have": "has", "do": "does", "go": "goes"}.get(verb, verb + "s")
    return match[1] + third


def _slot(kind: str, hint: str, match: re.Match[str], clause_head: str) -> str:
    """The rule's fixed slot, or one made from what the fact is about."""
    obj = match.groupdict().get("obj") or ""
    if hint == "relationship":
        rel = match["rel"].casefold()
        return f"relationship:{REL_NORMAL.get(rel, rel)}"
    if hint == "favourite":  # "my favourite drink is tea": the category, not the value
        words = content_words(obj)
        return f"preference:{stem(words[0])}" if words else "preference"
    if hint:
        return hint if kind == "identity" else f"{kind}:{hint}"
    head = _head(obj) or clause_head
    return f"{kind}:{head}" if head else kind


#: The conversation layer's statement keys as third-person facts: template and slot.
_STATEMENTS = {
    "name": ("{name}'s name is {value}", "name"),
    "lives_in": ("{name} lives in {value}", "residence"),
    "from": ("{name} is from {value}", "origin"),
    "works_at": ("{name} works at {value}", "employer"),
    "job": ("{name} works as {value}", "job"),
    "age": ("{name} is {value} years old", "age"),
    "birthday": ("{name}'s birthday is {value}", "birthday"),
    "allergy": ("{name} is allergic to {value}", "allergy"),
}


def _statement_facts(clause: str, exchange: Exchange, order: int) -> list[_Found]:
    """Identity facts by the conversation layer's statement patterns, in third person."""
    name = _subject(exchange)
    out = []
    for key, value in facts_from_statement(clause).items():
        if key in _STATEMENTS:
            template, slot = _STATEMENTS[key]
            text = template.format(name=name, value=value)
        elif key.startswith("favourite_"):
            what = key.removeprefix("favourite_").replace("_", " ")
            text, slot = f"{name}'s favourite {what} is {value}", f"preference:{stem(what)}"
        else:  # "<who>_name"
            who = key.removesuffix("_name")
            text, slot = f"{name}'s {who} is named {value}", f"relationship:{who}"
        kind = "identity" if not slot.startswith(("preference", "relationship")) else \
            slot.split(":")[0]
        out.append(_Found(kind, slot, text[:1].upper() + text[1:], False, order))
    return out


def _from_clause(clause: str, exchange: Exchange, order: int) -> list[_Found]:
    """Facts of one clause: every rule's first match, in reading order; a fact runs
    from its match to the next fact's ("I'm starting a studio 'cause I love dance")."""
    clause = LEADING.sub("", clause.strip())
    time_first = TIME_FIRST.match(clause)  # "Now I live in X" -> "I live in X now"
    if time_first:
        clause = f"{time_first[1]}{time_first[2]}{clause[time_first.end():]}".rstrip(" .!") \
            + " now"
    for pattern, replacement in REQUESTS:  # "remind me to ..." -> "I have to ..."
        clause = pattern.sub(replacement, clause)
    told = OBJECT_RELATIVE.match(clause)  # "The X I sent in to Y is ..." -> "I sent in the X to Y"
    if told:
        clause = (f"{told['who']} {told['adv'] or ''}{told['verb']}{told['particle'] or ''} "
                  f"the {told['thing']}{told['rest']}")
    if DROPPED_SUBJECT.match(clause):  # chat drops the subject: "Lost my job", "Been busy"
        first = clause.split(None, 1)[0].casefold()
        prefix = "I've " if first == "been" else "I'm " if first in ("gonna",) or \
            first.endswith("ing") else "I "
        clause = prefix + clause[0].lower() + clause[1:]
    found = _statement_facts(clause, exchange, order)
    if found:
        return found
    folded = clause.casefold().replace("\u2019", "'")
    matches: dict[int, tuple[str, str, re.Match[str]]] = {}
    for kind, hint, pattern in RULES:
        match = pattern.search(folded)
        if match is None or match.start() in matches:
            continue
        obj = match.groupdict().get("obj") or ""
        if (kind not in ("relationship", "identity") or hint == "no longer") and not _head(obj):
            continue  # "I'll let you know", "gonna give it a go": nothing to remember
        named = _NAMED_GROUP.get(hint)
        if named and (len(folded) != len(clause) or not clause[match.start(named)].isupper()):
            continue
        if hint == "relationship" and not RELATIVE_ACTS.match(obj):
            continue  # "my family!", "our first baby in June": a mention, not a fact
        matches[match.start()] = (kind, hint, match)
    starts: list[int] = []
    for start in sorted(matches):  # a later match splits only where a first person speaks
        if not starts or SPLIT_AT.match(folded, start) or (
            folded.startswith(("my ", "our "), start) and CONJUNCTION_END.search(folded[:start])
        ):
            starts.append(start)
    dated_clause = bool(salient(resolve_relative_dates(clause, exchange.ts)).dates)
    out = []
    for n, start in enumerate(starts):
        kind, hint, match = matches[start]
        end = starts[n + 1] if n + 1 < len(starts) else len(clause)
        text = _third_person(clause[start:end], exchange)
        obj_start = match.start("obj") if match.groupdict().get("obj") is not None else end
        if len(content_words(text)) < 2 or (
            kind not in ("relationship", "identity")
            and not _head(TRAIL.sub("", folded[obj_start:end]))
        ):
            continue
        if hint in _UPDATE_HINTS:
            kind, slot = _update_slot(kind, hint, match.groupdict().get("obj") or "", exchange,
                                      match.group(0))
        else:
            slot = _slot(kind, hint, match, _head(clause))
        out.append(_Found(kind, slot, text, dated_clause, order + n))
    return out


def _from_text(text: str, exchange: Exchange, first: int) -> list[_Found]:
    found: list[_Found] = []
    relative = ""  # the relative the sentence before named, for a "she ..." opening
    for n, sentence in enumerate(split_sentences(text)):
        sentence = with_antecedent(sentence.strip(), relative)
        relative = relative_named(sentence)
        if not sentence or sentence.rstrip(" )\"'").endswith("?"):
            continue  # a question states nothing
        order = first + n * 10
        correction = CORRECTION.match(sentence)
        body = sentence[correction.end():] if correction else sentence
        for pattern, replacement in UPDATES:  # "I changed my X, it's Y" -> "my X is now Y"
            body = pattern.sub(replacement, body)
        body = _NOW_TWICE.sub(r"\1", body)
        not_but = NOT_BUT.search(body)
        if not_but:
            correction = correction or not_but
            body = body[: not_but.start()] + not_but["new"] + body[not_but.end():]
        facts = [f for c in _clauses(body) for f in _from_clause(c, exchange, order)]
        strong = not_but is not None or STRONG_CORRECTION.match(sentence) is not None
        if correction is not None and not facts and _head(body) and (
            strong or re.match(r"(?i)(?:it|that)(?:'s|\s+is|\s+was)\b", body)
        ):
            name = _subject(exchange)
            rest = _third_person(body, exchange)
            facts = [_Found("correction", "", f"{name[:1].upper()}{name[1:]} corrected an "
                            f"earlier statement: {rest}", False, order)]
        elif correction is not None:  # "Actually, I just took my family camping": no value
            facts = [_Found("correction", f.slot, f.text, f.dated, f.order)
                     if strong or f.kind in VALUE_KINDS else f for f in facts]
        found.extend(facts)
    return found


def _from_reply(exchange: Exchange) -> list[_Found]:
    """What the reply explicitly confirms about the user, turned back to first person."""
    out: list[_Found] = []
    for n, sentence in enumerate(split_sentences(exchange.reply)):
        marker = CONFIRM.match(sentence)
        if marker is None or sentence.endswith("?"):
            continue
        body = sentence[marker.end():]
        if not re.match(r"(?i)(?:you|your)\b", body):
            continue
        swapped = re.sub(r"(?i)\byou're\b", "I'm", body)
        swapped = re.sub(r"(?i)\byou are\b", "I am", swapped)
        swapped = re.sub(r"(?i)\byour\b", "my", swapped)
        swapped = re.sub(r"(?i)\byou\b", "I", swapped)
        out.extend(_from_clause(swapped, exchange, 10_000 + n * 10))
    return out


def _from_tools(exchange: Exchange) -> list[_Found]:
    """Dated obligations and plans stated by tool results (already third person)."""
    out: list[_Found] = []
    for t, result in enumerate(exchange.tool_results):
        for n, sentence in enumerate(split_sentences(result)):
            for clause in _clauses(sentence):
                resolved = resolve_relative_dates(clause, exchange.ts)
                schedule = SCHEDULE.search(resolved)
                if schedule is None or not salient(resolved).dates:
                    continue
                obligation = schedule.group().casefold() in {"due", "deadline", "payable",
                                                             "overdue", "by"}
                kind = "obligation" if obligation else "plan"
                text = TRAIL.sub("", resolved).strip(" ,;:")
                slot = f"{kind}:{_head(resolved[: schedule.start()]) or _head(resolved)}"
                out.append(_Found(kind, slot, text[:1].upper() + text[1:], True,
                                  20_000 + t * 1000 + n * 10))
    return out


def _importance(found: _Found) -> float:
    value = IMPORTANCE.get(found.kind, 0.5)
    if found.dated and found.kind in ("plan", "obligation", "event"):
        value += DATED_BONUS
    return min(1.0, value)


def extract_facts(exchange: Exchange, *, limit: int) -> list[Candidate]:
    """Distil one exchange into at most ``limit`` facts, most important first.

    Args:
        exchange: the user's message, the assistant's reply, tool results, the
            turn's time (to resolve "next month") and the speaker's name.
        limit: the store's ``max_extractions_per_turn``; 0 gives no fact.

    Returns:
        Candidates with ``kind`` (one of :data:`KINDS`), ``slot`` (the subject a
        later fact about the same thing shares: "residence", "job",
        "preference:coffee", "relationship:sister"), ``importance`` by kind, and
        ``correction`` set when the user said the fact replaces an earlier value.
        No two candidates have the same text.

    Raises:
        ValueError: ``limit`` is negative.
    """
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit!r}")
    found = _from_text(exchange.user, exchange, 0) + _from_reply(exchange) + _from_tools(exchange)
    seen: set[str] = set()
    ranked = sorted(found, key=lambda f: (-_importance(f), f.order))
    out: list[Candidate] = []
    for f in ranked:
        key = f.text.casefold()
        if key in seen:
            continue
        seen.add(key)
        out.append(Candidate(text=f.text, importance=round(_importance(f), 3), slot=f.slot,
                             kind=f.kind, correction=f.kind == "correction"))
    return out[:limit]
