"""Main: answers the user with the LLM, its prompt built from its own memory.

For each user line Main records the message, opens a reasoning step over it (recall
over its memory; long-term hits above the threshold come back as cues), asks the
LLM, marks the cues its answer drew on, writes the answer as a private ``draft`` and
hands it to Mouth, who decides what is said. When the conversation layer is wired
in, the message goes through Main's session (recorded in its active topic, its
stated facts set, its tools dispatched) instead of a bare ``observe``, and only
what Mouth said enters the thread: a draft's narration or a key Mouth redacts never
reaches the next turn's context or a topic summary.

Fact memory (seeds 001 and 004), when the runtime has it: before each turn Main
recalls the turn's memory id's facts with the user's message as the query (the
request's ``memory``, else the scope's user; its ``memory_store``, else Main's
configured store, else ``default``) and the block goes into the context stack where
persistent memory goes; after the reply has gone out, the exchange (message, what
was said, the turn's tool results) is distilled into classified facts. Memory never
fails a turn: without it, or with a failing fact store, the turn proceeds (logged
once, see :mod:`solace.actors.fact_tools`).

The prompt (:func:`solace.conversation.answer.answer_with_memory`): a small model
(SmolLM2, :data:`SMALL_MODELS`) gets a short chat-template prompt (identity, durable
facts, the few relevant memory lines last, the last two exchanges); a capable one the
whole context stack. Either way a reply that repeats an earlier one is retried, and
a question about the user whose reply lacks what memory holds is answered from
memory (``From memory: dog name: Rex.``; ``grounded = False`` turns that off).

The workspace (seed 003): the identity Main speaks from is its session's (SOUL.md,
USER.md, AGENTS.md, loaded at session start and on ``/reload``; :data:`SYSTEM_PROMPT`
while the workspace is off). In a ``shared`` session (a group or channel) Main
recalls no facts and shows no durable facts: they belong to its human.

Memory never depends on the model (DESIGN.md, "Models"): if the LLM is missing or
fails, Main still answers, with a deterministic reply built from what it recalled,
and logs why.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from solace.actors.base import Actor, Message
from solace.actors.fact_tools import FactTools, TurnMemory
from solace.actors.mouth import DraftMessage, Speech, send_speech
from solace.actors.session import MainSession
from solace.conversation.answer import answer_with_memory, grounded_reply, is_repeat
from solace.conversation.model import Fact, ThreadItem
from solace.memory.record import Hit
from solace.models.llm import ChatMessage, ModelError
from substrate import SubstrateError

if TYPE_CHECKING:
    from solace.facts import RecallBlock

__all__ = [
    "MainActor", "UserLine", "fact_lines", "fallback_reply", "memory_block", "memory_lines",
    "tidy_reply",
]

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You are Solace, a friendly assistant with a long-term memory of this user."
)
MEMORY_TOKENS = 600  # how much recalled memory goes into the prompt (SmolLM2 has 2k context)
MEMORY_LINES = 4  # of which at most this many lines: a 135M model reads a few, not a page
MEMORY_LINE_CHARS = 240
EARLIER_REPLIES = 200  # replies a new one must not repeat
#: Models (by backend name) that get the short chat prompt instead of the context stack.
SMALL_MODELS = ("smollm", "135m", "360m", "none")
MIN_RELEVANCE = 0.25  # weighted cosine below this, without a lexical match, is not "about" it


@dataclass(frozen=True, slots=True)
class UserLine(Message):
    """A line typed by the user; ``reply`` receives Mouth's :class:`Speech`.

    ``memory`` / ``memory_store``: the request's fact-memory id and store (None:
    the scope's user, and Main's configured store or ``default``). ``session_type``:
    ``shared`` runs this turn as a shared session's (no private memory) in a process
    serving main sessions; None: the process's own type.
    """

    text: str
    reply: trio.MemorySendChannel[Speech] | None = None
    memory: str | None = None
    memory_store: str | None = None
    session_type: str | None = None


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


def prompt_lines(memories: Sequence[Hit]) -> list[str]:
    """The few memory lines a small model is shown: what the user (or another person)
    said, best first, at most :data:`MEMORY_LINES`, each cut to a line. Solace's own
    earlier replies are left out: shown again, a small model repeats them."""
    out = []
    for hit in memories:
        text = " ".join(hit.text.split())
        speaker = text.partition(": ")[0]
        if speaker in ("Main", "Mouth", "Solace", "assistant"):
            continue
        out.append(text if len(text) <= MEMORY_LINE_CHARS else text[:MEMORY_LINE_CHARS] + "…")
        if len(out) == MEMORY_LINES:
            break
    return out


def fact_lines(recalled: RecallBlock | None) -> list[str]:
    """The recalled facts as short-prompt memory lines, best first (a conflicting
    fact carries its flag, as in the block)."""
    if recalled is None or not recalled.text:
        return []
    return [line[2:] for line in recalled.text.splitlines() if line.startswith("- ")]


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
        fact_tools: the runtime's fact memory tools (recall before a turn,
            extraction after it), or None without fact memory.
    """

    def __init__(self, *args: Any, llm: Any, offloader: Any,
                 session: MainSession | None = None, fact_tools: FactTools | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.llm = llm
        self.offloader = offloader
        self.session = session
        self.fact_tools = fact_tools
        self.last_recall: RecallBlock | None = None  # the latest turn's recall block
        self.facts_extracted = 0  # facts written by extraction after turns (any class)
        self.answered = 0
        self.failed_turns = 0
        self.llm_failures = 0
        self.grounded = True  # questions about the user are answered from memory if need be
        # A small model reads the short prompt; a capable one the whole context stack.
        self.compact_prompt = any(m in str(getattr(llm, "name", "")).casefold()
                                  for m in SMALL_MODELS)
        self.answers_by: Counter[str] = Counter()
        self.last_failure: str | None = None

    async def handle(self, message: Message) -> None:
        if not isinstance(message, UserLine):
            await super().handle(message)
            return
        try:
            if self.session is None:
                await self.answer(message.text, message.reply, memory=message.memory,
                                  memory_store=message.memory_store)
                return
            async with self.session.as_type(message.session_type):
                await self.answer(message.text, message.reply, memory=message.memory,
                                  memory_store=message.memory_store)
        except (OSError, SubstrateError) as exc:  # a full or failing disk, a refused event
            self.failed_turns += 1
            log.error("Main: a turn could not be written (%s)", exc)
            await send_speech(message.reply, Speech(
                f"I could not finish that turn: {exc}. Recall still works; try again "
                "once there is space.", None, None))

    async def answer(self, text: str, reply: trio.MemorySendChannel[Speech] | None, *,
                     memory: str | None = None, memory_store: str | None = None) -> int:
        """Answer one user line; returns the draft's entry id (the speech follows via Mouth).

        ``memory`` / ``memory_store``: the turn's fact-memory id and store (see
        :class:`UserLine`). The exchange is distilled into facts after the speech has
        been handed on, so extraction never delays the reply.
        """
        session = self.session
        turn = self.fact_tools.begin_turn(memory, memory_store) if self.fact_tools else None
        asked_at = self.ctx.clock.now()
        if session is not None:
            entry_id = await session.record_user(text)
        else:
            entry_id = await self.observe(text, kind="message", speaker="user")
        recalled = await self._recall_facts(turn, text)
        async with self.reasoning_step(text, k=16) as step:
            memories = memory_block(step.hits, MEMORY_TOKENS, {entry_id})
            facts, thread, earlier = await self._conversation_view()
            stack = None
            if session is not None:  # built either way: it is what Main's memory holds
                stack = await session.context(memory_lines(memories), recalled)
                if self.compact_prompt:  # a small model reads the short prompt instead
                    stack = None
            short_memory = [*fact_lines(recalled), *prompt_lines(memories)]
            try:
                answer, how = await answer_with_memory(
                    self._complete, message=text, facts=facts,
                    identity=session.short_identity if session is not None else SYSTEM_PROMPT,
                    memory=short_memory, thread=thread, tidy=tidy_reply,
                    grounded=self.grounded, earlier=earlier, prompt=stack,
                )
                self.answers_by[how] += 1
                if how == "stuck":  # nothing usable and new: the deterministic answer,
                    self.llm_failures += 1  # unless that too was said before
                    log.warning("Main: the LLM gave no usable, new reply; falling back")
                    fallback = fallback_reply(text, memories, "no usable reply")
                    answer = answer if is_repeat(fallback, earlier) else fallback
            except ModelError as exc:
                self.llm_failures += 1
                self.last_failure = str(exc)
                log.warning("Main: the LLM could not answer (%s); using the fallback reply", exc)
                answer = fallback_reply(text, memories, str(exc))
                if self.grounded:  # memory still answers a question about the user
                    grounded, used = grounded_reply(text, "", facts, short_memory)
                    if used:
                        answer = grounded
                        self.answers_by["grounded"] += 1
            # Only what went in front of the model can be used: the hits kept as short
            # prompt lines (the small model's prompt, a retry's, grounding's), as kept,
            # and those the context stack holds; judged beside the thread and facts.
            in_stack = "\n".join(str(m["content"]) for m in stack or ())
            step.show([
                *((hit, line) for hit in memories for line in prompt_lines([hit])
                  if line in short_memory),
                *(hit for hit in memories if stack is not None and hit.text in in_stack)])
            step.detect_use(answer, context=[
                *(item.content for item in thread), *fact_lines(recalled),
                *(f"{k}: {f.value}" for k, f in facts.items())])
        if session is not None:
            answer = await session.dispatch(answer)
        draft_id = await self.ctx.observe_internal(answer, author=self.name, kind="draft")
        self.answered += 1
        if session is None:
            await self.ctx.send("Mouth", DraftMessage(answer, draft_id, reply))
            await self._extract_facts(turn, text, answer, (), asked_at)
            return draft_id
        # Only what Mouth says enters the thread: wait for it, record it, pass it on.
        send, receive = trio.open_memory_channel[Speech](1)
        async with receive:
            await self.ctx.send("Mouth", DraftMessage(answer, draft_id, send))
            speech = await receive.receive()
        if speech.text:
            await session.record_reply(speech.text)
        await send_speech(reply, speech)
        await self._extract_facts(turn, text, speech.text, tuple(session.turn_results),
                                  asked_at)
        return draft_id

    async def _recall_facts(self, turn: TurnMemory | None, text: str) -> RecallBlock | None:
        """The turn's recall block (None without fact memory, or when it fails)."""
        self.last_recall = None
        if self.fact_tools is None or turn is None:
            return None
        if self.session is not None and not self.session.private:
            return None  # a shared session: its human's facts stay out
        self.last_recall = await self.fact_tools.recall_block(turn, text, agent=self.name)
        return self.last_recall

    async def _extract_facts(self, turn: TurnMemory | None, text: str, said: str,
                             tool_results: tuple[str, ...], ts: float) -> None:
        """Distil the exchange into facts under the turn's memory (never raises)."""
        if self.fact_tools is None or turn is None:
            return
        from solace.facts import Exchange

        written = await self.fact_tools.extract(
            turn, Exchange(text, said, tool_results, ts), agent=self.name)
        self.facts_extracted += len(written)

    async def _complete(self, messages: list[ChatMessage], max_tokens: int,
                        temperature: float) -> str:
        return str(await self.offloader.run(
            self.llm.complete, messages, max_tokens=max_tokens, temperature=temperature
        ))

    async def _conversation_view(
        self,
    ) -> tuple[Mapping[str, Fact], list[ThreadItem], list[str]]:
        """The scope's durable facts, the active topic's thread and the replies given
        in the session's topics (nothing without the conversation layer)."""
        session = self.session
        if session is None:
            return {}, [], []
        conv = session.conversations
        sid = await session.session()
        topic = conv.active_topic(sid)
        facts = conv.facts(topic.scope) if session.private else {}
        earlier = [
            item.content for t in conv.topics(sid) for item in conv.thread(t.topic_id)
            if item.kind == "message" and item.role == "assistant"
        ][-EARLIER_REPLIES:]
        return facts, conv.thread(topic.topic_id), earlier

    def stats(self) -> dict[str, object]:
        out = super().stats()
        out.update(answered=self.answered, failed_turns=self.failed_turns,
                   llm_failures=self.llm_failures,
                   answers_by=dict(self.answers_by), facts_extracted=self.facts_extracted,
                   fact_failures=dict(self.fact_tools.failures) if self.fact_tools else {})
        return out
