"""On a terminal the REPL shows a prompt, and a "thinking…" indicator while Main works,
erased before the reply; piped, it prints replies only."""

from __future__ import annotations

import io
from dataclasses import dataclass

import trio
import trio.testing

from solace.surfaces.repl import PROMPT, THINKING, Repl


@dataclass
class Speech:
    text: str
    entry_id: int | None = None
    draft_id: int | None = None
    dropped_narration: int = 0
    dropped_credentials: int = 0


class SlowRuntime:
    conversations = None
    session = None

    async def ask(self, text: str, **turn: object) -> Speech:
        await trio.sleep(2.0)
        return Speech(f"you said {text}")


async def test_thinking_indicator_runs_while_main_works_and_is_erased(
    autojump_clock: trio.testing.MockClock,
) -> None:
    out = io.StringIO()
    repl = Repl(SlowRuntime(), out, interactive=True)
    with trio.CancelScope() as cancel:
        await repl.serve(io.StringIO("hello\n/quit\n"), exit_on_eof=True, cancel=cancel)
    text = out.getvalue()
    assert text.startswith(PROMPT)
    assert text.count(THINKING) >= 3  # redrawn while the two seconds pass
    assert "\r\033[K" + "Solace: you said hello" in text.replace(f"\r{THINKING}", "")
    assert text.rstrip().endswith(PROMPT.rstrip())


async def test_piped_output_holds_only_the_replies(
    autojump_clock: trio.testing.MockClock,
) -> None:
    out = io.StringIO()
    repl = Repl(SlowRuntime(), out, interactive=False)
    with trio.CancelScope() as cancel:
        await repl.serve(io.StringIO("hello\n"), exit_on_eof=True, cancel=cancel)
    assert out.getvalue() == "Solace: you said hello\n"
