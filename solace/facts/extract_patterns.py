"""The extractor's fixed vocabulary: kinds and their importance, and the patterns.

Kept apart from :mod:`solace.facts.extract_rules` (which applies them) so the rule
table reads as one list. Every pattern runs over one casefolded clause in the first
person ("i", "my"); none of them is tuned to one data set's phrasing.
"""

from __future__ import annotations

import re

__all__ = [
    "IMPORTANCE", "KINDS", "OBJECT_RELATIVE", "RELATIVES", "REL_NORMAL", "ROLE", "RULES",
    "UPDATES",
]

#: Importance by kind: what must be right (identity, corrections, obligations) first.
IMPORTANCE: dict[str, float] = {
    "correction": 0.9, "identity": 0.85, "obligation": 0.8, "relationship": 0.75,
    "plan": 0.7, "preference": 0.65, "possession": 0.55, "event": 0.5,
}  # fmt: skip
KINDS = tuple(IMPORTANCE)
DATED_BONUS = 0.1  # a plan or obligation with a date is worth more than one without

_I = r"i"
_WE = r"(?:i|we)"  # a family trip or a team's win is the speaker's event too
_ADV = r"(?:\s+(?:really|also|just|still|always|totally|definitely|absolutely|actually|" \
    r"truly|especially|kinda|so|finally|recently|now|already|currently|even|do))*"
#: The people a speaker calls "my <relative>" (a regex alternation, casefolded).
RELATIVES = (r"wife|husband|partner|son|daughter|kids|children|child|boss|brother|sister|"
             r"mother|father|mom|mum|dad|parents|friend|best friend|girlfriend|boyfriend|"
             r"fiance|fiancee|grandma|grandmother|grandpa|grandfather|cousin|aunt|uncle|niece|"
             r"nephew|family|baby|colleague|coworker|roommate|neighbou?r|agent|mentor|crew")
REL_NORMAL = {"mom": "mother", "mum": "mother", "dad": "father", "kids": "children",
               "child": "children", "best friend": "friend", "neighbour": "neighbor",
               "grandma": "grandmother", "grandpa": "grandfather", "fiancee": "fiance",
               "coworker": "colleague", "crew": "team",
               # one partner at a time, whatever the word: a later one replaces the earlier
               "girlfriend": "partner", "boyfriend": "partner", "wife": "partner",
               "husband": "partner", "fiance": "partner", "spouse": "partner"}  # fmt: skip
# Past tenses that report a thought or a feeling, not an event.
NOT_EVENTS = ("wanted|loved|liked|enjoyed|hoped|needed|talked|thought|felt|noticed|realized|"
               "realised|heard|seemed|used|tried|asked|called|guessed|missed|wished|agreed|"
               "figured|appreciated|wondered|imagined|mentioned|meant|supposed|owed|expected|"
               "believed|learned|learnt|remembered|forgot|worried|decided|planned|hated|"
               "preferred|considered|looked|watched|listened|played|stayed|checked|saw")
#: ``(kind, slot, pattern)``: each pattern reads one casefolded first-person clause; its
#: group ``obj`` is the subject matter. ``slot`` is fixed ("residence"), or ``""`` for
#: ``kind:<head word of obj>``, ``"relationship"`` for ``relationship:<relative>`` and
#: ``"favourite"`` for ``preference:<category>``.
_NOT_ROLES = r"believer|lover|beginner|member|follower|supporter|newcomer|dreamer|worrier|" \
    r"thinker|talker|loner|sucker|fan|person|reader|listener|learner|gamer|player|winner"
#: What "I'm a ..." / "X is a ..." names when it names a role ("a nurse", "a software
#: engineer"), not a kind of person ("a big believer", "a fan").
ROLE = (rf"(?![\w\s-]*\b(?:{_NOT_ROLES})\b)[\w\s-]{{0,30}}?(?:er|or|ist|ian|ant|ent|nurse|chef|"
        r"guard|coach|student|athlete|artist|vet|surgeon|pilot|clerk|medic|architect|mechanic|"
        r"barista|analyst|secretary|cook|judge|attorney|midwife|diplomat)")
_MONTH_OR_DAY = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|monday|tuesday|" \
    r"wednesday|thursday|friday|saturday|sunday"
# Requests that state a standing wish or a duty, rewritten as the statement they make.
REQUESTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)^(?:please\s+)?remind\s+me\s+(?:to|that\s+i\s+(?:have|need)\s+to)\s+"),
     "I have to "),
    (re.compile(r"(?i)^(?:please\s+)?(?:from now on,?\s+)?(always|never)\s+(?=\w)"),
     r"I want you to \1 "),
    (re.compile(r"(?i)^please\s+(?:don't|do\s+not)\s+(?=\w)"), "I want you not to "),
)
# What follows "my <relative>" when the clause says something about them: a name, a
# verb ("my sister Maya is", "my mom just retired", "my dad passed away"); a past
# thought or feeling ("my mom loved to ...") is no more a fact about them than it is
# about the speaker (NOT_EVENTS).
RELATIVE_ACTS = re.compile(
    r"(?:\s+[\w'-]+)?\s+(?:is|are|was|were|has|have|had|will|would|can|just|also|still|never|"
    r"always|and|took|got|went|made|gave|left|came|lost|won|ran|met|told|said|bought|found|"
    rf"\w+s|(?!(?:{NOT_EVENTS})\b)\w+ed)\b|'s\b"
)
# Words that qualify a thing but do not name it ("a new laptop" is about the laptop).
MODIFIERS = frozenset(
    """new old first second third fourth fifth sixth seventh eighth ninth tenth last big little
    small own long short lovely beautiful huge
    favourite favorite best whole entire real actual always never usually often sometimes
    please""".split()
)
_NUMBER = r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+dozen)"
_MOVED = r"(?:extended|pushed|moved|postponed|rescheduled|delayed|shifted|changed|bumped)"
#: Update phrasings said as a change, rewritten as the plain statement of the new value
#: ("I changed my number, it's X" -> "my number is now X"), so the rules below read
#: the value and put it in the same slot as the earlier statement. Each runs on a
#: clause (case-insensitive); the words all come from the clause but "is", "now", "have".
UPDATES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)(?<![\w'])i(?:'ve|\s+have)?\s+(?:just\s+)?(?:changed|updated|replaced|"
                r"gone\s+off|got\s+tired\s+of|got\s+bored\s+of|ditched|dropped)\s+"
                r"my\s+(?:old\s+|previous\s+|former\s+)?([\w\s'-]{1,30}?)\s*(?:,|;|:|\s+-|\s+and)\s*"
                r"(?:it's|it\s+is|the\s+new\s+one\s+is)\s+"), r"my \1 is now "),
    (re.compile(r"(?i)(?<![\w'])i(?:'ve|\s+have)?\s+(?:just\s+)?(?:changed|updated|switched)\s+my\s+"
                r"([\w\s'-]{1,30}?)\s+to\s+"), r"my \1 is now "),
    (re.compile(r"(?i)(?<![\w'])my\s+([\w\s'-]{1,30}?)\s+(?:has\s+)?(?:changed|switched)\s+to\s+"),
     r"my \1 is now "),
    (re.compile(rf"(?i)(?<![\w'])(?:we|i)(?:'re|'m|\s+are|\s+am)\s+(?:now\s+)?up\s+to\s+"
                rf"(?={_NUMBER}\s+[a-z]+s\b)"), "I have "),
)
_IRREGULAR_PAST = r"went|made|drew|wrote|began|found|gave|sent|saw|left|flew|drove|rode|" \
    r"sang|taught|caught|swam|became|chose|spent|held|hosted|threw|led|won"
#: "The screenplay I sent in to the festival has been on my mind": an event told as an
#: object relative clause before the sentence's own verb, rewritten as the event
#: ("I sent in the screenplay to the festival") before the rules read the clause.
OBJECT_RELATIVE = re.compile(
    r"(?i)^(?:the|this|that)\s+(?P<thing>(?:(?!(?:is|was|are|were|has|had)\b)[\w'-]+\s+){0,3}?"
    r"(?!(?:is|was|are|were|has|had)\b)[\w'-]+)\s+(?:(?:that|which)\s+)?(?P<who>i|we)\s+"
    r"(?P<adv>(?:just|finally|recently|already)\s+)?"
    rf"(?P<verb>(?!(?:{NOT_EVENTS})\b)\w+[^e\W]ed|{_IRREGULAR_PAST}|bought|built|sold|took|"
    r"got|lost|ran|met|broke)\b"
    r"(?P<particle>\s+(?:in|out|up|off|back|over|away|down)\b)?(?P<rest>[^,;]*?)\s+"
    r"(?:is|was|are|were|has|have|had|will|turned|ended|came|got|went)\b.*"
)
_RULE_TABLE = (
    # updates said as a change of value (see UPDATES for the rewritten ones)
    ("preference", "switch",
     rf"\b{_WE}(?:'ve|\s+have)?{_ADV}\s+(?:switched|gone\s+over|moved\s+over)\s+(?:over\s+)?"
     r"(?:from\s+[\w\s'-]+?\s+)?to\s+(?P<obj>(?!the\s+(?:night|day|early|late)\b).+)"),
    ("relationship", "partner",
     rf"\b{_I}(?:'m|\s+am){_ADV}\s+(?:dating|seeing|engaged\s+to|married\s+to|"
     r"in\s+a\s+relationship\s+with|going\s+out\s+with|together\s+with|with)\s+"
     r"(?P<obj>[a-z][\w'-]*)(?=(?:\s+now|\s+these\s+days)?\s*[.!]*\s*$)"),
    ("identity", "job",
     rf"\b{_I}(?:'ve|\s+have)?{_ADV}\s+(?:became|become)\s+(?:a|an)\s+(?P<obj>[\w\s-]{{1,30}})"),
    ("identity", "no longer",
     rf"\b{_I}(?:'m|\s+am)?\s+no\s+longer\s+(?P<obj>.+)"),
    ("identity", "no longer",
     rf"\b{_I}(?:\s+don't|\s+do\s+not|'m\s+not|\s+am\s+not)\s+(?P<obj>.+?)\s+any\s*more\b.*"),
    ("plan", "",
     r"\bthe\s+(?P<obj>[\w\s'-]{1,30}?)\s+(?:is|are)\s+(?:now\s+)?(?:on|every)\s+"
     rf"(?:{_MONTH_OR_DAY}|\d).*"),
    ("plan", "",
     rf"\b{_WE}{_ADV}\s+(?:meet|train|practice|practise|rehearse)\b(?P<obj>.*\bevery\s+"
     rf"(?:{_MONTH_OR_DAY}).*)"),
    ("identity", "employer",
     rf"\b{_I}(?:\s+(?:may|might)\s+have|'ve|\s+have)?{_ADV}\s+(?:found|landed|got|started|"
     r"accepted|taken|took)\s+(?:a\s+|the\s+)?(?:new\s+|full-time\s+|part-time\s+)?job\s+"
     r"(?:at|with)\s+(?P<obj>.+)"),
    ("event", "",
     rf"\b{_WE}{_ADV}\s+got\s+(?P<obj>(?:accepted|hired|promoted|admitted|selected|"
     r"shortlisted)\b.+)"),
    ("possession", "car", rf"\b{_I}{_ADV}\s+(?:drive|drives)\s+(?:a|an)\s+(?P<obj>.+)"),
    ("preference", "drink",
     rf"\b{_I}{_ADV}\s+(?:mostly\s+|only\s+)?drink\s+(?!(?:too|a\s+lot|much|less|more)\b)"
     r"(?P<obj>.+)"),
    ("plan", "moved",
     rf"\b(?:they|he|she|we|i|it)(?:'ve|\s+have)?\s+{_MOVED}\s+(?:back\s+|forward\s+)?"
     rf"(?P<obj>(?:my|our|the)\s+[\w\s'-]{{1,40}}?)\s+(?:back\s+|forward\s+|out\s+)?"
     r"(?:to|until|till)\s+.+"),
    ("plan", "moved",
     r"\b(?:my|our|the)\s+(?P<obj>[\w\s'-]{1,40}?)\s+(?:has\s+been\s+|was\s+|were\s+|got\s+|"
     rf"is\s+|are\s+)?{_MOVED}\s+(?:back\s+|forward\s+|out\s+)?(?:to|until|till)\s+.+"),
    ("possession", "value",
     rf"\bmy\s+(?P<obj>(?!(?:favou?rite|fave|go-to|{RELATIVES})\b)[\w'-]+(?:\s+[\w'-]+)?)\s+(?:is|are)\s+"
     r"(?:now\s+.+|(?:a|an)\s+.+?\s+now$)"),
    ("possession", "brand",  # "my car is a Honda": the value must be capitalised (checked)
     rf"\bmy\s+(?P<obj>(?!(?:favou?rite|fave|go-to|{RELATIVES})\b)[\w'-]+(?:\s+[\w'-]+)?)\s+(?:is|are)\s+"
     r"(?:a|an)\s+(?P<value>[\w-]+.*)"),
    ("obligation", "",
     rf"\b{_I}{_ADV}\s+(?:have|has|need|needs|got|'ve got)\s+to\s+(?P<obj>.+)"),
    ("obligation", "", rf"\b{_I}{_ADV}\s+(?:must|gotta)\s+(?P<obj>.+)"),
    ("obligation", "", r"\b(?:my|our|the)\s+(?P<obj>[\w\s'-]{1,40}?)\s+(?:is|are)\s+due\b.*"),
    ("obligation", "", r"\b(?:my|our|the)\s+deadline\b(?P<obj>.*)"),
    ("preference", "favourite",
     r"\bmy\s+(?:favou?rite|fave?|top pick|go-to)\s+(?P<obj>[\w\s'-]+?\s+(?:is|are|was)\s+.+)"),
    ("preference", "",
     r"\b(?P<obj>[\w\s'-]{2,40}?)\s+(?:is|are)\s+(?:[\w-]+\s+){0,3}?my\s+(?:main\s+|biggest\s+|"
     r"favou?rite\s+)?(?:favou?rites?|faves?|top picks?|go-to|hobby|hobbies|passions?)\b.*"),
    ("preference", "",
     rf"\b{_I}(?:'m|\s+am)\s+not{_ADV}\s+(?:into|a fan of|keen on)\s+(?P<obj>.+)"),
    ("preference", "",
     rf"\b{_I}(?:\s+don't|\s+do not|\s+never){_ADV}\s+(?:like|enjoy|eat|drink)\s+(?P<obj>.+)"),
    ("preference", "",
     rf"\b{_I}{_ADV}\s+(?:love|loves|like|likes|enjoy|enjoys|adore|prefer|hate|dislike|"
     r"can't stand|cannot stand)\s+(?!(?:to\s+(?:hear|see|know)|that|this|it|your|you|"
     r"the idea|the sound|how)\b)(?P<obj>.+)"),
    ("preference", "",
     rf"\b{_I}(?:'m|\s+am|'re|\s+are){_ADV}\s+(?:a\s+(?:big|huge)\s+fan\s+of|"
     r"a\s+(?:big\s+|huge\s+)?\w+\s+fan|into|passionate about|keen on|obsessed with|"
     r"all about)\b(?P<obj>.*)"),
    ("preference", "",
     rf"\b{_I}{_ADV}\s+(?:want|need|would like|'d like)\s+you\s+"
     r"(?!to\s+(?:know|understand|see|hear|meet)\b)(?P<obj>(?:to|not to)\s+.+)"),
    ("preference", "diet",
     rf"\b{_I}(?:'m|\s+am){_ADV}\s+(?:a\s+)?(?P<obj>vegetarian|vegan|pescatarian|"
     r"lactose[- ]intolerant|gluten[- ]free|teetotal|sober)\b.*"),
    ("identity", "job",
     rf"\b{_I}(?:'m|\s+am){_ADV}\s+(?:a|an)\s+(?P<obj>{ROLE})\b(?!\s+(?:of|fan))"),
    ("identity", "job",
     rf"\b{_I}{_ADV}\s+(?:work|worked|working)\s+(?:as|at|for|in)\s+(?P<obj>.+)"),
    ("identity", "job", r"\b(?:new\s+)?job\s+as\s+(?:a|an)\s+(?P<obj>.+)"),
    ("identity", "residence",
     rf"\b{_I}(?:'m|\s+am|'ve|\s+have)?{_ADV}\s+(?:live|lives|living|moved|relocated|grew up|"
     r"based)\s+(?:in|to)\s+(?P<obj>.+)"),
    ("identity", "age", rf"\b{_I}(?:'m|\s+am)\s+(?:\d{{1,3}}|turning \d{{1,3}})\b(?P<obj>.*)"),
    ("relationship", "relationship",
     rf"\b(?:my|our)\s+(?:\w+\s+)?(?P<rel>{RELATIVES})\b(?P<obj>.*)"),
    ("plan", "",
     rf"\b{_WE}(?:'m|'re|\s+am|\s+are){_ADV}\s+(?:moving|relocating|expecting)\s+(?P<obj>.+)"),
    ("plan", "",
     rf"\b{_I}(?:'m|\s+am|\s+was){_ADV}\s+(?:going to|gonna|planning(?:\s+to|\s+on)?|"
     r"heading(?:\s+to)?|starting(?!\s+to\b)|thinking about|thinking of|considering|"
     r"exploring|hoping to|about to|looking to|keen to|aiming to|saving for|saving up for|"
     r"looking for|searching for|looking forward to|in talks with|applying for|trying to)"
     r"\s+(?P<obj>.+)"),
    ("plan", "",
     rf"\b{_I}(?:'ll|'d like to|{_ADV}\s+(?:will|gonna|plan to|plan on|intend to|hope to|"
     r"want to|wanna|would like to|aim to))\s+(?P<obj>.+)"),
    ("plan", "", r"\b(?P<obj>.+?)\s+is\s+(?:\w+\s+)?on\s+my\s+(?:to-do|bucket|wish)\s+list\b.*"),
    ("plan", "",
     rf"\b{_I}(?:'m|\s+am)\s+(?P<obj>\w+ing\b.*\b(?:next|coming|tomorrow|tonight|"
     r"this weekend|this evening)\b.*)"),
    ("plan", "", r"\bmy\s+(?:goal|plan|dream)\s+is\s+(?:to\s+)?(?P<obj>.+)"),
    ("possession", "",  # "we now have three cats": a household's are the speaker's too
     rf"\bwe{_ADV}\s+(?:have|'ve got|own)\s+(?P<obj>{_NUMBER}\s+(?:[\w-]+\s+)?[\w-]+s\b.*)"),
    ("possession", "",
     rf"\b{_I}{_ADV}\s+(?:have|has|'ve got|own|owns|bought|got)\s+(?!to\b|no\s+idea|been|fun|"
     r"a\s+(?:good|great|nice|blast)|an?\s+(?:idea|question))"
     r"(?P<obj>(?:a|an|two|three|four|five|\d+|my|our|myself|some|new|no)\b.+)"),
    ("possession", "", r"\bmy\s+new\s+(?P<obj>.+)"),
    ("event", "",
     rf"\b{_I}(?:'ve|\s+have){_ADV}\s+been{_ADV}\s+(?:busy\s+)?(?!(?:feeling|thinking|"
     r"wondering|meaning|hoping|going|trying|dying|looking forward)\b)(?P<obj>\w+ing\b.+)"),
    ("event", "",
     rf"\b{_I}{_ADV}\s+had\s+(?P<obj>(?:a|an)\s+(?:[\w-]+\s+){{0,2}}?(?:chat|talk|meeting|"
     r"conversation|interview|scare|accident|surgery|operation|baby|party|date|trip|"
     r"appointment|exam|wedding|injury|breakup|promotion)\b.*)"),
    ("event", "",
     rf"\b{_I}(?:'m|\s+am){_ADV}\s+(?:doing|taking|learning|studying|practicing|practising|"
     r"training|volunteering|working on|writing|building|reading|renovating)\b(?P<obj>.+)"),
    ("plan", "",
     r"\b(?:my|our)\s+(?P<obj>[\w\s'-]{1,30}?)\s+(?:is|are|starts|begins|ends|renews|expires)"
     rf"\s+(?:on\s+|in\s+|at\s+)?(?:next|this|coming|tomorrow|tonight|\d|{_MONTH_OR_DAY}).*"),
    ("event", "",
     rf"\b{_WE}{_ADV}\s+(?:won|lost|started|finished|joined|signed|moved|visited|went to|"
     r"attended|graduated|quit|retired|launched|founded|donated|adopted|married|got married|"
     r"got engaged|ran|hiked|traveled|travelled|took|volunteer|volunteered|completed|passed|"
     r"failed|broke|met|built|created|published|bought|sold|got back)\b(?P<obj>.*)"),
    ("event", "",
     rf"\b{_WE}{_ADV}\s+(?!(?:{NOT_EVENTS})\b)(?:\w+[^e\W]ed|{_IRREGULAR_PAST})\b(?P<obj>.*)"),
)
#: What a switch is a switch of, by the new thing's head word ("switched to oolong" is
#: about the speaker's drink).
CATEGORIES: dict[str, frozenset[str]] = {
    "drink": frozenset("""coffee tea espresso latte cappuccino americano macchiato mocha
        matcha chai oolong cocoa chocolate juice smoothie soda cola lemonade beer wine cider
        kombucha milk water decaf""".split()),
}
RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (kind, slot, re.compile(pattern)) for kind, slot, pattern in _RULE_TABLE
)
CORRECTION = re.compile(
    r"^(?:(?:oh|sorry|oops|wait)[,!]?\s+)?(?:actually|correction|no,?\s+i\s+meant|i\s+meant|"
    r"sorry,?\s+i\s+meant|to\s+correct\s+myself|let\s+me\s+correct\s+that)\b[,:]?\s*",
    re.IGNORECASE,
)
# "not Tuesday but Wednesday"; not "not only ... but also", "not much ..., but I ..."
NOT_BUT = re.compile(
    r"\bnot\s+(?!(?:only|just|much|really|that|sure|because|even|about|so|too|very|always|"
    r"exactly|quite|all|many|everyone|everything)\b)(?P<old>(?:[\w'-]+\s+){0,3}[\w'-]+),?\s+"
    r"but\s+(?!(?:also|i|we|it|they|he|she|you|that|this|still|now|then)\b)(?P<new>[^,.;!]+)",
    re.IGNORECASE,
)
# Strong markers make any sentence a correction; "actually" only a fact about a value.
STRONG_CORRECTION = re.compile(
    r"(?i)^(?:(?:oh|sorry|oops|wait)[,!]?\s+)?(?:correction|no,?\s+i\s+meant|i\s+meant|"
    r"sorry,?\s+i\s+meant|to\s+correct\s+myself|let\s+me\s+correct\s+that)\b"
)
VALUE_KINDS = frozenset(("identity", "preference", "relationship", "plan", "obligation",
                          "possession"))
LEADING = re.compile(
    r"^(?:(?:and|but|so|well|yeah|yes|yep|oh|also|plus|btw|by the way|anyway|cause|because|"
    r"though|honestly|luckily|sadly|guess what|haha|lol|hey|hi|ok|okay|totally|definitely)"
    r"\b[,!]?\s*)+",
    re.IGNORECASE,
)
# "Now I live ...", "These days I work ...": the time said first (moved to the end).
TIME_FIRST = re.compile(r"(?i)^(?:now|these\s+days|nowadays|currently|at\s+the\s+moment|"
                        r"right\s+now)\s*,?\s+(i|we)\b((?:'m|\s+am|'re|\s+are)?)")
DROPPED_SUBJECT = re.compile(
    r"^(?:just\s+|finally\s+|recently\s+)*(?:lost|got|started|finished|signed|bought|moved|"
    r"joined|won|went|been|gonna|planning|heading|working|volunteering|finishing|starting)\b",
    re.IGNORECASE,
)
CONFIRM = re.compile(
    r"^(?:noted|got it|understood|ok(?:ay)?|sure|i'll remember|i will remember|i've noted|"
    r"i have noted|i'll keep in mind|i will keep in mind)\b[,:!.]?\s*(?:that\s+)?",
    re.IGNORECASE,
)
SCHEDULE = re.compile(r"\b(?:due|deadline|renews?|expires?|scheduled|appointment|meeting|"
                       r"starts?|ends?|payable|overdue|booked|reservation|by)\b", re.IGNORECASE)
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|we|we're|we've)\b", re.IGNORECASE)
SUBJECTIVE = re.compile(r"\b(?:i|we|it|he|she|they|this|that|my|our|you|there|who)\b"
                         r"|\b\w+(?:'s|'re|'m)\b", re.IGNORECASE)
# Content words that carry no fact of their own: "I'll let you know", "gonna give it a go".
EMPTY_OBJECTS = frozenset(
    """let know keep posted check see talk catch tell give go bet send think try sure glad
    happy thanks thank definitely totally soon later time fun chat hear say admit agree
    run bye care luck hope wait imagine believe guess mean things day lot way nice cool
    great awesome amazing good make look like love feel doing hang take super excited exciting
    stoked pumped goes going went happens turns works now""".split()
)
SPLIT_AT = re.compile(r"(?:i|i'm|i've|i'll|i'd|we|we're|we've)\b")
CONJUNCTION_END = re.compile(r"(?:\band|\bbut|\bso|\bbecause|\bcause|[,;:])\s*$")
TRAIL = re.compile(r"\s+[-\u2013\u2014~]+\s.*$|\s*(?:!+|\.\.\.).*$|"
                    r"(?:[\s!.,;:]+|\s+(?:'?cause|because|and|but|so|since|or))+$")
