"""The thought→speech filter: what of a draft may be said aloud.

Mouth is the only actor that emits ``speech`` events, and this is the rule it
applies: internal narration (a model's "thinking", notes to self, plans) and
anything that looks like a credential or key never leave as an utterance. It is a
pure function on text so it can be tested on its own and applied identically
everywhere. It errs on the side of silence: a line that trips any rule is dropped
whole, not patched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SpokenText", "to_speech"]

# Whole blocks of model reasoning.
_THINK_BLOCK = re.compile(
    r"<(think|thinking|thought|internal|scratchpad)>.*?(</\1>|\Z)", re.IGNORECASE | re.DOTALL
)
# A line that opens as narration meant for the agent itself.
_NARRATION = re.compile(
    r"^\s*(?:[-*>]\s*)?(?:"
    r"\(\s*(?:internal|thinking|thought|aside|note to self)\b.*"
    r"|\[\s*(?:internal|thinking|thought|draft|note to self|system)\b.*"
    r"|\*\s*(?:thinks|thinking|internally|to (?:myself|self))\b.*"
    r"|(?:internal(?: narration| note| monologue)?|thought|thoughts|thinking|reasoning|"
    r"inner monologue|note to self|self-note|plan|scratchpad|draft|"
    r"chain of thought)\s*:.*"
    r")$",
    re.IGNORECASE,
)
# Things that look like secrets: provider key formats, private keys, tokens, and
# "password: ..." style assignments.
_CREDENTIALS = [
    re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}\b"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    re.compile(r"-----BEGIN [A-Z ]*(?:PRIVATE KEY|CERTIFICATE)-----"),
    re.compile(
        r"\b(?:password|passwd|passphrase|pwd|secret|api[_\- ]?key|access[_\- ]?key|"
        r"auth[_\- ]?token|token|private[_\- ]?key|client[_\- ]?secret)\b\s*(?:is\s*)?[:=]\s*\S+",
        re.IGNORECASE,
    ),
    re.compile(r"\b[0-9a-fA-F]{32,}\b"),  # hex keys, digests of secrets
    # long unbroken base64-ish strings mixing cases and digits
    re.compile(r"\b(?=[A-Za-z0-9+/_\-]*[0-9])(?=[A-Za-z0-9+/_\-]*[a-z])"
               r"(?=[A-Za-z0-9+/_\-]*[A-Z])[A-Za-z0-9+/_\-]{32,}={0,2}"),
]


@dataclass(frozen=True, slots=True)
class SpokenText:
    """What Mouth may say of a draft.

    Attributes:
        text: the lines that passed, in order, joined by newlines ("" if none did).
        dropped_narration: how many lines were internal narration.
        dropped_credentials: how many lines looked like they carried a secret.
    """

    text: str
    dropped_narration: int
    dropped_credentials: int

    @property
    def silent(self) -> bool:
        """Nothing was left to say."""
        return not self.text.strip()


def looks_like_credential(line: str) -> bool:
    """True if ``line`` contains something shaped like a key, token or password."""
    return any(p.search(line) for p in _CREDENTIALS)


def to_speech(draft: str) -> SpokenText:
    """Filter ``draft`` into speech: drop narration blocks and lines, and credential lines.

    Guarantees: the output contains no line of the input that matched a narration
    or credential rule, and no text from inside a ``<think>``-style block; what
    remains is unchanged apart from surrounding blank lines being trimmed.
    """
    narration = len(_THINK_BLOCK.findall(draft))
    body = _THINK_BLOCK.sub("", draft)
    kept: list[str] = []
    credentials = 0
    for line in body.splitlines():
        if _NARRATION.match(line):
            narration += 1
        elif looks_like_credential(line):
            credentials += 1
        else:
            kept.append(line)
    return SpokenText("\n".join(kept).strip(), narration, credentials)
