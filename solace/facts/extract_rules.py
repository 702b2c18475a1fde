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
from solace.facts.model import Candidate, Exchange
from solace.memory.ladder.dates import resolve_relative_dates
from solace.memory.ladder.pronouns import resolve_pronouns
from solace.memory.ladder.sentences import split_clauses, split_sentences
from solace.memory.lexical import content_words, stem
from solace.models.entities import salient

__all__ = ["IMPORTANCE", "KINDS", "extract_facts"]

#: Importance by kind: what must be right (identity, corrections, obligations) first.
IMPORTANCE: dict[str, float] = {
    "correction": 0.9, "identity": 0.85, "obligation": 0.8, "relationship": 0.75,
    "plan": 0.7, "preference": 0.65, "possession": 0.55, "event": 0.5,
}  # fmt: skip
KINDS = tuple(IMPORTANCE)
_DATED_BONUS = 0.1  # a plan or obligation with a date is worth more than one without

_I = r"i"
_WE = r"(?:i|we)"  # a family trip or a team's win is the speaker's event too
_ADV = r"(?:\s+(?:really|also|just|still|always|totally|definitely|absolutely|actually|" \
    r"truly|especially|kinda|so|finally|recently|now|already|currently|even|do))*"
_REL = (r"wife|husband|partner|son|daughter|kids|children|child|boss|brother|sister|"
        r"mother|father|mom|mum|dad|parents|friend|best friend|girlfriend|boyfriend|fiance|"
        r"fiancee|grandma|grandmother|grandpa|grandfather|cousin|aunt|uncle|niece|nephew|"
        r"family|baby|colleague|coworker|roommate|neighbou?r|agent|mentor|crew")
_REL_NORMAL = {"mom": "mother", "mum": "mother", "dad": "father", "kids": "children",
               "child": "children", "best friend": "friend", "neighbour": "neighbor",
               "grandma": "grandmother", "grandpa": "grandfather", "fiancee": "fiance",
               "coworker": "colleague", "crew": "team"}  # fmt: skip
# Past tenses that report a thought or a feeling, not an event.
_NOT_EVENTS = ("wanted|loved|liked|enjoyed|hoped|needed|talked|thought|felt|noticed|realized|"
               "realised|heard|seemed|used|tried|asked|called|guessed|missed|wished|agreed|"
               "figured|appreciated|wondered|imagined|mentioned|meant|supposed|owed|expected|"
               "believed|learned|learnt|remembered|forgot|worried|decided|planned|hated|"
               "preferred|considered|looked|watched|listened|played|stayed|checked|saw")
# (kind, pattern over the first-person clause, casefolded); group "obj" is the subject matter
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern)) for kind, pattern in (
        ("obligation", rf"\b{_I}{_ADV}\s+(?:have|has|need|needs|got|'ve got)\s+to\s+(?P<obj>.+)"),
        ("obligation", rf"\b{_I}{_ADV}\s+(?:must|gotta)\s+(?P<obj>.+)"),
        ("obligation", r"\b(?:my|our|the)\s+(?P<obj>[\w\s'-]{1,40}?)\s+(?:is|are)\s+due\b.*"),
        ("obligation", r"\b(?:my|our|the)\s+deadline\b(?P<obj>.*)"),
        ("preference", r"\bmy\s+(?:favou?rite|fave?|top pick|go-to)\s+(?P<obj>[\w\s'-]+?\s+"
                       r"(?:is|are|was)\s+.+)"),
        ("preference", r"\b(?P<obj>[\w\s'-]{2,40}?)\s+(?:is|are)\s+(?:[\w-]+\s+){0,3}?my\s+"
                       r"(?:main\s+|biggest\s+|favou?rite\s+)?(?:favou?rites?|faves?|top picks?|"
                       r"go-to|hobby|hobbies|passions?)\b.*"),
        ("preference", rf"\b{_I}(?:'m|\s+am)\s+not{_ADV}\s+(?:into|a fan of|keen on)\s+"
                       r"(?P<obj>.+)"),
        ("preference", rf"\b{_I}(?:\s+don't|\s+do not|\s+never){_ADV}\s+(?:like|enjoy|eat|drink)\s+"
                       r"(?P<obj>.+)"),
        ("preference", rf"\b{_I}{_ADV}\s+(?:love|loves|like|likes|enjoy|enjoys|adore|prefer|"
                       r"hate|dislike|can't stand|cannot stand)\s+(?!(?:to\s+(?:hear|see|know)|"
                       r"that|this|it|your|you|the idea|the sound|how)\b)(?P<obj>.+)"),
        ("preference", rf"\b{_I}(?:'m|\s+am|'re|\s+are){_ADV}\s+(?:a\s+(?:big|huge)\s+fan\s+of|"
                       r"a\s+(?:big\s+|huge\s+)?\w+\s+fan|into|passionate about|keen on|"
                       r"obsessed with|all about|allergic to|vegetarian|vegan)\b(?P<obj>.*)"),
        ("identity", rf"\b{_I}(?:'m|\s+am){_ADV}\s+(?:a|an)\s+(?P<obj>[\w\s-]{{0,30}}?"
                     r"(?:er|or|ist|ian|ant|ent|nurse|chef|guard|coach|student|parent|mom|dad|"
                     r"athlete|artist|vet|surgeon|pilot|clerk))\b(?!\s+(?:of|fan))"),
        ("identity", rf"\b{_I}{_ADV}\s+(?:work|worked|working)\s+(?:as|at|for|in)\s+(?P<obj>.+)"),
        ("identity", r"\b(?:new\s+)?job\s+as\s+(?:a|an)\s+(?P<obj>.+)"),
        ("identity", rf"\b{_I}{_ADV}\s+(?:live|lives|moved|grew up|am based|'m based)\s+"
                     r"(?:in|to)\s+(?P<obj>.+)"),
        ("identity", rf"\b{_I}(?:'m|\s+am)\s+(?:\d{{1,3}}|turning \d{{1,3}})\b(?P<obj>.*)"),
        ("relationship", rf"\b(?:my|our)\s+(?:\w+\s+)?(?P<rel>{_REL})\b(?P<obj>.*)"),
        ("plan", rf"\b{_I}(?:'m|\s+am|\s+was){_ADV}\s+(?:going to|gonna|planning(?:\s+to|\s+on)?|"
                 r"heading(?:\s+to)?|starting(?!\s+to\b)|thinking about|thinking of|considering|"
                 r"exploring|hoping to|about to|looking to|keen to|aiming to|saving for|"
                 r"saving up for|looking for|"
                 r"searching for|looking forward to|in talks with|applying for|trying to)"
                 r"\s+(?P<obj>.+)"),
        ("plan", rf"\b{_I}(?:'ll|'d like to|{_ADV}\s+(?:will|gonna|plan to|plan on|intend to|"
                 r"hope to|want to|wanna|would like to|aim to))\s+(?P<obj>.+)"),
        ("plan", r"\b(?P<obj>.+?)\s+is\s+(?:\w+\s+)?on\s+my\s+(?:to-do|bucket|wish)\s+list\b.*"),
        ("plan", rf"\b{_I}(?:'m|\s+am)\s+(?P<obj>\w+ing\b.*\b(?:next|coming|tomorrow|tonight|"
                 r"this weekend|this evening)\b.*)"),
        ("plan", r"\bmy\s+(?:goal|plan|dream)\s+is\s+(?:to\s+)?(?P<obj>.+)"),
        ("possession", rf"\b{_I}{_ADV}\s+(?:have|has|'ve got|own|owns|bought|got)\s+(?!to\b|no\s+"
                       r"idea|been|fun|a\s+(?:good|great|nice|blast)|an?\s+(?:idea|question))"
                       r"(?P<obj>(?:a|an|two|three|four|five|\d+|my|our|myself|some|new|no)\b.+)"),
        ("possession", r"\bmy\s+new\s+(?P<obj>.+)"),
        ("event", rf"\b{_I}(?:'ve|\s+have){_ADV}\s+been{_ADV}\s+(?:busy\s+)?"
                  r"(?!(?:feeling|thinking|wondering|meaning|hoping|"
                  r"going|trying|dying|looking forward)\b)(?P<obj>\w+ing\b.+)"),
        ("event", rf"\b{_I}{_ADV}\s+had\s+(?P<obj>(?:a|an)\s+(?:[\w-]+\s+){{0,2}}?"
                  r"(?:chat|talk|meeting|"
                  r"conversation|interview|scare|accident|surgery|operation|baby|party|date|trip|"
                  r"appointment|exam|wedding|injury|breakup|promotion)\b.*)"),
        ("event", rf"\b{_I}(?:'m|\s+am){_ADV}\s+(?:doing|taking|learning|studying|"
                  r"practicing|practising|training|volunteering|working on|writing|building|"
                  r"reading|renovating)\b(?P<obj>.+)"),
        ("plan", r"\b(?:my|our)\s+(?P<obj>[\w\s'-]{1,30}?)\s+(?:is|are|starts|begins|ends|renews|"
                 r"expires)\s+(?:on\s+|in\s+|at\s+)?(?:next|this|coming|tomorrow|tonight|\d|"
                 r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|monday|tuesday|"
                 r"wednesday|thursday|friday|saturday|sunday).*"),
        ("event", rf"\b{_WE}{_ADV}\s+(?:won|lost|started|finished|joined|signed|moved|visited|"
                  r"went to|attended|graduated|quit|retired|launched|founded|donated|adopted|"
                  r"married|got married|got engaged|ran|hiked|traveled|travelled|took|"
                  r"volunteer|volunteered|completed|passed|failed|broke|met|built|created|"
                  r"published|bought|sold|got back)\b(?P<obj>.*)"),
        ("event", rf"\b{_WE}{_ADV}\s+(?!(?:{_NOT_EVENTS})\b)(?:\w+ed|went|made|drew|wrote|began|"
                  r"found|gave|saw|left|flew|drove|rode|sang|taught|caught|swam|became|chose|spent|"
                  r"held|hosted|threw|led|won)"
                  r"\b(?P<obj>.*)"),
    )
)
_CORRECTION = re.compile(
    r"^(?:(?:oh|sorry|oops|wait)[,!]?\s+)?(?:actually|correction|no,?\s+i\s+meant|i\s+meant|"
    r"sorry,?\s+i\s+meant|to\s+correct\s+myself|let\s+me\s+correct\s+that)\b[,:]?\s*",
    re.IGNORECASE,
)
# "not Tuesday but Wednesday"; not "not only ... but also", "not much ..., but I ..."
_NOT_BUT = re.compile(
    r"\bnot\s+(?!(?:only|just|much|really|that|sure|because|even|about|so|too|very|always|"
    r"exactly|quite|all|many|everyone|everything)\b)(?P<old>(?:[\w'-]+\s+){0,3}[\w'-]+),?\s+"
    r"but\s+(?!(?:also|i|we|it|they|he|she|you|that|this|still|now|then)\b)(?P<new>[^,.;!]+)",
    re.IGNORECASE,
)
# Strong markers make any sentence a correction; "actually" only a fact about a value.
_STRONG_CORRECTION = re.compile(r"(?i)^(?:(?:oh|sorry|oops|wait)[,!]?\s+)?(?:correction|no,?\s+i\s+"
                                r"meant|i\s+meant|sorry,?\s+i\s+meant|to\s+correct\s+myself|"
                                r"let\s+me\s+correct\s+that)\b")
_VALUE_KINDS = frozenset(("identity", "preference", "relationship", "plan", "obligation",
                          "possession"))
_LEADING = re.compile(
    r"^(?:(?:and|but|so|well|yeah|yes|yep|oh|also|plus|btw|by the way|anyway|cause|because|"
    r"though|honestly|luckily|sadly|guess what|haha|lol|hey|hi|ok|okay|totally|definitely)"
    r"\b[,!]?\s*)+",
    re.IGNORECASE,
)
_DROPPED_SUBJECT = re.compile(
    r"^(?:just\s+|finally\s+|recently\s+)*(?:lost|got|started|finished|signed|bought|moved|"
    r"joined|won|went|been|gonna|planning|heading|working|volunteering|finishing|starting)\b",
    re.IGNORECASE,
)
_CONFIRM = re.compile(
    r"^(?:noted|got it|understood|ok(?:ay)?|sure|i'll remember|i will remember|i've noted|"
    r"i have noted|i'll keep in mind|i will keep in mind)\b[,:!.]?\s*(?:that\s+)?",
    re.IGNORECASE,
)
_SCHEDULE = re.compile(r"\b(?:due|deadline|renews?|expires?|scheduled|appointment|meeting|"
                       r"starts?|ends?|payable|overdue|booked|reservation|by)\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|we|we're|we've)\b", re.IGNORECASE)
_SUBJECTIVE = re.compile(r"\b(?:i|we|it|he|she|they|this|that|my|our|you|there|who)\b"
                         r"|\b\w+(?:'s|'re|'m)\b", re.IGNORECASE)
# Content words that carry no fact of their own: "I'll let you know", "gonna give it a go".
_EMPTY_OBJECTS = frozenset(
    """let know keep posted check see talk catch tell give go bet send think try sure glad
    happy thanks thank definitely totally soon later time fun chat hear say admit agree
    run bye care luck hope wait imagine believe guess mean things day lot way nice cool
    great awesome amazing good make look like love feel doing hang take super excited exciting
    stoked pumped""".split()
)
_SPLIT_AT = re.compile(r"(?:i|i'm|i've|i'll|i'd|we|we're|we've)\b")
_CONJUNCTION_END = re.compile(r"(?:\band|\bbut|\bso|\bbecause|\bcause|[,;:])\s*$")
_TRAIL = re.compile(r"\s+[-\u2013\u2014~]+\s.*$|\s*(?:!+|\.\.\.).*$|"
                    r"(?:[\s!.,;:]+|\s+(?:'?cause|because|and|but|so|since|or))+$")


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
    words = [w for w in content_words(obj) if w not in _EMPTY_OBJECTS]
    return stem(words[0]) if words else ""


def _clauses(sentence: str) -> Iterator[str]:
    """Clauses of one sentence; a piece without a subject of its own ("and Panda",
    "reading, or playing my violin") stays with the clause before it."""
    pieces: list[str] = []
    for piece in split_clauses(sentence):
        if pieces and (not _SUBJECTIVE.search(piece) or re.match(r"(?i)(?:and|or)\b", piece)
                       and not _FIRST_PERSON.search(piece)):
            joiner = " " if re.match(r"(?i)(?:and|or)\b", piece) else ", "
            pieces[-1] = f"{pieces[-1]}{joiner}{piece}"
        else:
            pieces.append(piece)
    yield from pieces


def _third_person(clause: str, exchange: Exchange) -> str:
    text = resolve_relative_dates(clause, exchange.ts)
    name = _subject(exchange)
    text, _ = resolve_pronouns(text, name)
    text = re.sub(r"(?i)^we\b", f"{name} and others", text)  # "we" alone names no one
    text = _TRAIL.sub("", text).strip(" ,;:'\"")
    return text[:1].upper() + text[1:]


def _slot(kind: str, match: re.Match[str], sentence_key: str) -> str:
    obj = match.groupdict().get("obj") or ""
    if kind == "relationship":
        rel = match["rel"].casefold()
        return f"relationship:{_REL_NORMAL.get(rel, rel)}"
    if kind == "identity":
        pattern = match.re.pattern
        if "live" in pattern:
            return "residence"
        if "job" in pattern or "work" in pattern or "(?:a|an)" in pattern:
            return "job"
        return "age"
    if kind == "preference" and "favou?rite" in match.re.pattern and match.re.pattern.startswith(
        r"\bmy"
    ):
        words = content_words(obj)
        return f"preference:{stem(words[0])}" if words else "preference"
    head = _head(obj) or sentence_key
    return f"{kind}:{head}" if head else kind


def _statement_facts(clause: str, exchange: Exchange, order: int) -> list[_Found]:
    """Identity facts by the conversation layer's statement patterns, in third person."""
    name = _subject(exchange)
    out = []
    for key, value in facts_from_statement(clause).items():
        if key == "name":
            text, slot = f"{name}'s name is {value}", "name"
        elif key == "lives_in":
            text, slot = f"{name} lives in {value}", "residence"
        elif key == "from":
            text, slot = f"{name} is from {value}", "origin"
        elif key == "works_at":
            text, slot = f"{name} works at {value}", "employer"
        elif key == "job":
            text, slot = f"{name} works as {value}", "job"
        elif key == "age":
            text, slot = f"{name} is {value} years old", "age"
        elif key == "birthday":
            text, slot = f"{name}'s birthday is {value}", "birthday"
        elif key == "allergy":
            text, slot = f"{name} is allergic to {value}", "allergy"
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
    clause = _LEADING.sub("", clause.strip())
    if _DROPPED_SUBJECT.match(clause):  # chat drops the subject: "Lost my job", "Been busy"
        first = clause.split(None, 1)[0].casefold()
        prefix = "I've " if first == "been" else "I'm " if first in ("gonna",) or \
            first.endswith("ing") else "I "
        clause = prefix + clause[0].lower() + clause[1:]
    found = _statement_facts(clause, exchange, order)
    if found:
        return found
    folded = clause.casefold().replace("\u2019", "'")
    matches: dict[int, tuple[str, re.Match[str]]] = {}
    for kind, pattern in _RULES:
        match = pattern.search(folded)
        if match is None or match.start() in matches:
            continue
        obj = match.groupdict().get("obj") or ""
        if kind not in ("relationship", "identity") and not _head(obj):
            continue  # "I'll let you know", "gonna give it a go": nothing to remember
        if kind == "relationship" and not content_words(obj):
            continue  # "my family!": a mention, not a fact
        matches[match.start()] = (kind, match)
    starts: list[int] = []
    for start in sorted(matches):  # a later match splits only where a first person speaks
        if not starts or _SPLIT_AT.match(folded, start) or (
            folded.startswith(("my ", "our "), start) and _CONJUNCTION_END.search(folded[:start])
        ):
            starts.append(start)
    dated_clause = bool(salient(resolve_relative_dates(clause, exchange.ts)).dates)
    out = []
    for n, start in enumerate(starts):
        kind, match = matches[start]
        end = starts[n + 1] if n + 1 < len(starts) else len(clause)
        text = _third_person(clause[start:end], exchange)
        obj_start = match.start("obj") if match.groupdict().get("obj") is not None else end
        if len(content_words(text)) < 2 or (
            kind not in ("relationship", "identity")
            and not _head(_TRAIL.sub("", folded[obj_start:end]))
        ):
            continue
        out.append(_Found(kind, _slot(kind, match, _head(clause)), text, dated_clause, order + n))
    return out


def _from_text(text: str, exchange: Exchange, first: int) -> list[_Found]:
    found: list[_Found] = []
    for n, sentence in enumerate(split_sentences(text)):
        sentence = sentence.strip()
        if not sentence or sentence.rstrip(" )\"'").endswith("?"):
            continue  # a question states nothing
        order = first + n * 10
        correction = _CORRECTION.match(sentence)
        body = sentence[correction.end():] if correction else sentence
        not_but = _NOT_BUT.search(body)
        if not_but:
            correction = correction or not_but
            body = body[: not_but.start()] + not_but["new"] + body[not_but.end():]
        facts = [f for c in _clauses(body) for f in _from_clause(c, exchange, order)]
        strong = not_but is not None or _STRONG_CORRECTION.match(sentence) is not None
        if correction is not None and not facts and _head(body) and (
            strong or re.match(r"(?i)(?:it|that)(?:'s|\s+is|\s+was)\b", body)
        ):
            name = _subject(exchange)
            rest = _third_person(body, exchange)
            facts = [_Found("correction", "", f"{name[:1].upper()}{name[1:]} corrected an "
                            f"earlier statement: {rest}", False, order)]
        elif correction is not None:  # "Actually, I just took my family camping": no value
            facts = [_Found("correction", f.slot, f.text, f.dated, f.order)
                     if strong or f.kind in _VALUE_KINDS else f for f in facts]
        found.extend(facts)
    return found


def _from_reply(exchange: Exchange) -> list[_Found]:
    """What the reply explicitly confirms about the user, turned back to first person."""
    out: list[_Found] = []
    for n, sentence in enumerate(split_sentences(exchange.reply)):
        marker = _CONFIRM.match(sentence)
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
                schedule = _SCHEDULE.search(resolved)
                if schedule is None or not salient(resolved).dates:
                    continue
                obligation = schedule.group().casefold() in {"due", "deadline", "payable",
                                                             "overdue", "by"}
                kind = "obligation" if obligation else "plan"
                text = _TRAIL.sub("", resolved).strip(" ,;:")
                slot = f"{kind}:{_head(resolved[: schedule.start()]) or _head(resolved)}"
                out.append(_Found(kind, slot, text[:1].upper() + text[1:], True,
                                  20_000 + t * 1000 + n * 10))
    return out


def _importance(found: _Found) -> float:
    value = IMPORTANCE.get(found.kind, 0.5)
    if found.dated and found.kind in ("plan", "obligation", "event"):
        value += _DATED_BONUS
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
