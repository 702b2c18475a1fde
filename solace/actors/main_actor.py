"""Main: answers the user with the LLM, its prompt built from its own memory.

For each user line Main records the message, opens a reasoning step over it (recall
over its memory; long-term hits above the threshold come back as cues), asks the
LLM, marks the cues its answer drew on, writes the answer as a private ``draft`` and
hands it to Mouth, who decides what is said. When the conversation layer is wired
in, the message goes through Main's session (recorded in its active topic, the
context stack built around it, its tools dispatched) instead of a bare ``observe``,
and only what Mouth said enters the thread: a draft's narration or a key Mouth
redacts never reaches the next turn's context or a topic summary.

Memory never depends on the model (DESIGN.md, "Models"): if the LLM is missing or
fails, Main still answers, with a deterministic reply built from what it recalled,
and logs why.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import trio

from solace.actors.base import Actor, Message
from solace.actors.mouth import DraftMessage, Speech
from solace.actors.session import MainSession
from solace.memory.record import Hit
from solace.models.llm import ChatMessage, ModelError

__all__ = [
    "MainActor", "UserLine", "fallback_reply", "memory_block", "memory_lines", "tidy_reply",
]

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You are Main, the conversational agent of Solace, an assistant with long-term memory. "
    "Answer the user briefly and truthfully. Use the memories below when they are relevant; "
    "do not invent facts that are not in them."
)
MEMORY_TOKENS = 600  # how much recalled memory goes into the prompt (SmolLM2 has 2k context)
REPLY_TOKENS = 160
MIN_RELEVANCE = 0.25  # weighted cosine below this, without a lexical match, is not "about" it


@dataclass(frozen=True, slots=True)
class UserLine(Message):
    """A line typed by the user; ``reply`` receives Mouth's :class:`Speech`."""

    text: str
    reply: trio.MemorySendChannel[Speech] | None = None


def memory_block(hits: Sequence[Hit], budget_tokens: int, exclude: set[int]) -> list[Hit]:
    """The hits that go into the prompt: best first, within ``budget_tokens``, skipping
    hits that only stand for events in ``exclude`` (the message being answered) and
    hits with no relevance to it (neither semantic nor lexical)."""
    out, used = [], 0
    for hit in hits:
        if set(hit.entry_ids) <= exclude:
            continue
        if hit.parts.relevance < MIN_RELEVANCE and hit.parts.lexical <= 0.0:
            continue
        if used + hit.tokens > budget_tokens:
            break
        out.append(hit)
        used += hit.tokens
    return out


def memory_lines(memories: Sequence[Hit]) -> str:
    """Recalled memories as prompt lines, read-through ones attributed to their owner."""
    return "\n".join(
        f"- [{hit.owner}] {hit.text}" if hit.owner else f"- {hit.text}" for hit in memories
    )


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def tidy_reply(raw: str) -> str | None:
    """A model's reply with its loop cut off, or None if nothing sensible is left.

    Small models decoding greedily fall into loops ("I'm here to help. I'm here to
    help. ..."): the reply is cut before the first sentence that repeats an earlier
    one. Line breaks are kept (Mouth filters line by line). A reply without a word of
    two letters or more ("A:") is not an answer.
    """
    lines: list[str] = []
    seen: set[str] = set()
    looped = False
    for line in raw.strip().splitlines():
        kept = []
        for sentence in _SENTENCE_END.split(line.strip()):
            key = " ".join(sentence.casefold().split())
            if not key:
                continue
            if key in seen:
                looped = True
                break
            seen.add(key)
            kept.append(sentence.strip())
        if kept:
            lines.append(" ".join(kept))
        if looped:
            break
    text = "\n".join(lines).strip()
    if not re.search(r"[^\W\d_]{2,}", text):
        return None
    return text


def fallback_reply(text: str, memories: Sequence[Hit], reason: str) -> str:
    """Main's deterministic answer when the LLM cannot answer (same input, same reply)."""
    head = "I can't reach my language model right now"
    if memories:
        best = memories[0]
        source = f" (from {best.owner}'s memory)" if best.owner else ""
        return f"{head}, but this is what I remember{source}: {best.text}"
    return f"{head}. I have noted what you said."


class MainActor(Actor):
    """The Main actor. Counters: ``answered``, ``llm_failures``.

    Args (beyond :class:`Actor`'s):
        llm: the chat model. offloader: runs its blocking calls off the loop.
        session: Main's session of the conversation layer, or None without it.
    """

    def __init__(self, *args: Any, llm: Any, offloader: Any,
                 session: MainSession | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.llm = llm
        self.offloader = offloader
        self.session = session
        self.answered = 0
        self.llm_failures = 0
        self.last_failure: str | None = None

    async def handle(self, message: Message) -> None:
        if not isinstance(message, UserLine):
            await super().handle(message)
            return
        await self.answer(message.text, message.reply)

    async def answer(self, text: str, reply: trio.MemorySendChannel[Speech] | None) -> int:
        """Answer one user line; returns the draft's entry id (the speech follows via Mouth)."""
        session = self.session
        if session is not None:
            entry_id = await session.record_user(text)
        else:
            entry_id = await self.observe(text, kind="message", speaker="user")
        async with self.reasoning_step(text, k=16) as step:
            memories = memory_block(step.hits, MEMORY_TOKENS, {entry_id})
            if session is not None:
                messages = await session.context(memory_lines(memories))
            else:
                messages = self.prompt(text, memories)
            try:
                raw = await self.offloader.run(
                    self.llm.complete, messages, max_tokens=REPLY_TOKENS
                )
                answer = tidy_reply(raw)
                if answer is None:
                    self.llm_failures += 1
                    log.warning("Main: the LLM's reply was empty or degenerate (%r); "
                                "using the fallback reply", raw[:80])
                    answer = fallback_reply(text, memories, "degenerate reply")
            except ModelError as exc:
                self.llm_failures += 1
                self.last_failure = str(exc)
                log.warning("Main: the LLM could not answer (%s); using the fallback reply", exc)
                answer = fallback_reply(text, memories, str(exc))
            step.detect_use(answer)
        if session is not None:
            answer = await session.dispatch(answer)
        draft_id = await self.observe(answer, kind="draft")
        self.answered += 1
        if session is None:
            await self.ctx.send("Mouth", DraftMessage(answer, draft_id, reply))
            return draft_id
        # Only what Mouth says enters the thread: wait for it, record it, pass it on.
        send, receive = trio.open_memory_channel[Speech](1)
        async with receive:
            await self.ctx.send("Mouth", DraftMessage(answer, draft_id, send))
            speech = await receive.receive()
        if speech.text:
            await session.record_reply(speech.text)
        if reply is not None:
            try:
                await reply.send(speech)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # the asker stopped waiting; the speech is recorded all the same
        return draft_id

    def prompt(self, text: str, memories: Sequence[Hit]) -> list[ChatMessage]:
        """The chat messages sent to the LLM for ``text`` without the conversation layer."""
        system = SYSTEM_PROMPT
        if memories:
            system += "\n\nMemories:\n" + memory_lines(memories)
        return [{"role": "system", "content": system}, {"role": "user", "content": text}]

    def stats(self) -> dict[str, object]:
        out = super().stats()
        out.update(answered=self.answered, llm_failures=self.llm_failures)
        return out
