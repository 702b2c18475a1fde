"""Seed 000's exit triggers are wired into the REPL: ``/quit``, the end of input,
idle time and Ctrl-C each run the debounced evaluation of the active topic (a title
and summary appear) before the process exits; logs go to a file, never the chat."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio
import trio.testing

from solace import TrioClock, open_runtime
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.conversation.model import DEFAULT_SCOPE
from solace.surfaces.repl import LOG_FILE, Repl, setup_logging

LINES = ["I'm planning a trip to Lisbon in June.", "I prefer window seats on flights."]


def config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
    )


def _summarised(rt: object) -> bool:
    conv = rt.conversations  # type: ignore[attr-defined]
    (topic,) = conv.topics_of(DEFAULT_SCOPE)
    return bool(topic.summary) and topic.summary_count == topic.message_count


@pytest.mark.parametrize("ending", ["/quit\n", ""])  # /quit, or the end of input
async def test_quit_and_end_of_input_evaluate_the_topic_before_exit(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, ending: str
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        out = io.StringIO()
        repl = Repl(rt, out)
        await repl.start()
        with trio.CancelScope() as cancel:
            await repl.serve(io.StringIO("".join(f"{ln}\n" for ln in LINES) + ending),
                             exit_on_eof=True, cancel=cancel)
        assert not _summarised(rt)
        conv = rt.conversations
        assert conv.lifecycle.debouncer.pending == {repl.session_id}  # the exit trigger
        await repl.finish()
        assert _summarised(rt) and not conv.lifecycle.debouncer.pending
        assert out.getvalue().count("Solace:") == 2


async def test_idle_time_fires_the_evaluation_once_per_quiet_spell(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        repl = Repl(rt, io.StringIO())
        await repl.start()
        for line in LINES:
            await repl.handle(line)
        conv = rt.conversations
        async with trio.open_nursery() as nursery:
            nursery.start_soon(repl.watch_idle, 60.0)
            await trio.sleep(59.0)
            assert not _summarised(rt)
            await trio.sleep(1.0 + 2.0 + 0.5)  # idle, then the 2 s debounce
            await conv.settle()
            assert _summarised(rt)
            fired = conv.lifecycle.debouncer.fired
            await trio.sleep(600.0)
            assert conv.lifecycle.debouncer.fired == fired  # no input, no new spell
            nursery.cancel_scope.cancel()


def test_setup_logging_writes_the_file_and_only_verbose_reaches_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import logging

    root = logging.getLogger()
    before = list(root.handlers)
    try:
        setup_logging(tmp_path / LOG_FILE, verbose=False)
        logging.getLogger("solace.test").info("quiet line")
        assert "quiet line" in (tmp_path / LOG_FILE).read_text()
        captured = capsys.readouterr()
        assert "quiet line" not in captured.out and "quiet line" not in captured.err
    finally:
        for handler in root.handlers[len(before):]:
            handler.close()
        root.handlers[:] = before


@pytest.mark.slow
def test_ctrl_c_evaluates_the_topic_and_logs_stay_out_of_the_chat(tmp_path: Path) -> None:
    cfg = tmp_path / "solace.toml"
    cfg.write_text('[models]\nembedder = "hashing"\nllm_backend = "none"\n')
    home = tmp_path / "home"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""}
    proc = subprocess.Popen(
        [sys.executable, "-m", "solace.surfaces.cli.main", "--config", str(cfg), "run", "--home",
         str(home)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(f"{ln}\n" for ln in LINES))
        proc.stdin.flush()
        deadline = time.monotonic() + 120
        replies = 0
        while replies < 2 and time.monotonic() < deadline:
            replies += proc.stdout.readline().startswith("Solace:")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "INFO" not in out and "WARNING" not in out and err == ""
    log_text = (home / LOG_FILE).read_text()
    assert "exit trigger interrupt" in log_text and "SIGINT received" in log_text
    listed = subprocess.run(
        [sys.executable, "-m", "solace.surfaces.cli.main", "--config", str(cfg), "topics", "list",
         "--home", str(home)], capture_output=True, text=True, env=env, check=True,
    ).stdout
    assert "Lisbon" in listed and "untitled" not in listed  # summarised on the way out
