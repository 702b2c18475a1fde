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

__all__ = ["SECRET_CLASSES", "SpokenText", "looks_like_credential", "to_speech"]

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
# Things that look like secrets: provider key formats, private keys, tokens,
# "password: ..." style assignments and internal IP addresses. This is the one secret
# detector: Mouth's speech and every file the workspace writes pass it
# (:data:`SECRET_CLASSES` names what each pattern catches).
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
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
    # more provider formats: Stripe, GitLab, npm, Hugging Face, Google OAuth
    re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    re.compile(r"\bnpm_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bya29\.[A-Za-z0-9_\-]{20,}"),
    # bearer tokens, and credentials inside a URL (scheme://user:password@host)
    re.compile(r"\bbearer\s+[A-Za-z0-9._~+/\-]{16,}=*", re.IGNORECASE),
    re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:[^\s/@]+@", re.IGNORECASE),
    # passwords said in words ("my password is hunter2"); keys and tokens said in words
    # only with a value that carries a digit ("the API key is 7fq3..."), so "the token
    # count is small" stays speech
    re.compile(r"\b(?:password|passwd|passphrase|passcode|pwd)\s+(?:is|was)\s+\S+",
               re.IGNORECASE),
    re.compile(r"\b(?:api[_\- ]?key|access[_\- ]?key|auth[_\- ]?token|token|secret|"
               r"client[_\- ]?secret)\s+(?:is|was)\s+(?=\S*\d)\S{8,}", re.IGNORECASE),
    # internal IP addresses: RFC 1918 private ranges, link-local, carrier-grade NAT
    # (loopback is everyone's and not secret)
    re.compile(rf"(?<![\d.])(?:10(?:\.{_OCTET}){{3}}|192\.168(?:\.{_OCTET}){{2}}|"
               rf"172\.(?:1[6-9]|2\d|3[01])(?:\.{_OCTET}){{2}}|169\.254(?:\.{_OCTET}){{2}}|"
               rf"100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7])(?:\.{_OCTET}){{2}})(?![\d]|\.\d)"),
    # IPv6 unique-local (fc00::/7) and link-local (fe80::/10) addresses
    re.compile(r"(?<![0-9A-Za-z:])f[cd][0-9a-f]{2}:[0-9a-f:]*:[0-9a-f:]*[0-9a-f]", re.IGNORECASE),
    re.compile(r"(?<![0-9A-Za-z:])fe[89ab][0-9a-f]:[0-9a-f:]*:[0-9a-f:]*[0-9a-f]", re.IGNORECASE),
]

#: The classes of secret :func:`looks_like_credential` catches, each with an example
#: shape (tests plant one of each).
SECRET_CLASSES: dict[str, str] = {
    "api_key": "provider key formats: OpenAI/Anthropic sk-..., AWS AKIA/ASIA..., GitHub "
               "ghp_/github_pat_..., Slack xox?-..., Google AIza..., Stripe sk_live_..., "
               "GitLab glpat-..., npm_..., Hugging Face hf_...",
    "token": "JWTs (eyJ...eyJ...), bearer tokens, Google OAuth ya29..., long hex or "
             "mixed-case base64 strings",
    "password": "password/passphrase/pwd/secret/api key/token assignments (key: value, "
                "key = value, 'my password is ...') and credentials in a URL "
                "(scheme://user:password@host)",
    "private_key": "PEM blocks: -----BEGIN ... PRIVATE KEY----- (RSA, EC, OpenSSH, PGP) "
                   "and certificates",
    "internal_ip": "private IPv4 (10/8, 172.16/12, 192.168/16), link-local (169.254/16), "
                   "carrier-grade NAT (100.64/10), IPv6 unique-local fc00::/7 and "
                   "link-local fe80::/10",
}


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
    """True if ``line`` contains something shaped like a credential, API key, token,
    password, private key or internal IP address (:data:`SECRET_CLASSES`).

    The one secret detector: Mouth drops such lines from speech and the workspace
    never writes them to a file. It errs on the side of caution (a version string
    shaped like ``10.1.2.3`` is withheld too).
    """
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
