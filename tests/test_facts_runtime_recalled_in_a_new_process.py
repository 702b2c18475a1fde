"""Seed 004's end-to-end check: a fact remembered in one process is recalled in a
brand-new process that shares no history with it: the recall block of Main's
context stack on that process's first turn carries it."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import trio

from solace import TrioClock, open_runtime
from solace.app import Solace
from solace.config import Config, ModelsConfig, SubstrateConfig

FACT = "The customer prefers invoices summarised in French."

# The second process: opens the home, asks one question under the memory id, and
# prints what Main's context stack carried (nothing else is shared with the first).
SECOND_PROCESS = textwrap.dedent("""
    import json, sys
    import trio
    from solace import open_runtime
    from solace.config import Config, ModelsConfig, SubstrateConfig
    from solace.conversation import DEFAULT_SCOPE

    async def main(home, memory):
        config = Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                        substrate=SubstrateConfig(fsync="never"))
        async with open_runtime(home, config) as rt:
            sessions_before = len(rt.conversations.sessions(DEFAULT_SCOPE))
            await rt.ask("Can you send my invoices in French from now on?", memory=memory)
            stack = rt.session.last_stack
            block = rt.agent("Main").last_recall
            print(json.dumps({
                "recall": stack.recall, "recall_tokens": stack.recall_tokens,
                "block_tokens": block.tokens if block else None,
                "memory_section": stack.stable.split("# Memory", 1)[-1],
                "sessions_before": sessions_before,
            }))

    trio.run(main, sys.argv[1], sys.argv[2])
""")


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"))


async def _second_process(tmp_path: Path, memory: str) -> dict[str, object]:
    script = tmp_path / "second.py"
    script.write_text(SECOND_PROCESS)
    done = await trio.run_process(
        [sys.executable, str(script), str(tmp_path / "home"), memory],
        capture_stdout=True, capture_stderr=True, check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    out: dict[str, object] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return out


async def test_a_fact_remembered_in_one_process_is_recalled_in_a_brand_new_one(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path / "home", config(), clock=TrioClock()) as rt:
        result = await Solace(rt).remember("cust-42", FACT)
        assert result.write_class.value == "ADD"
        assert rt.conversations.sessions(Solace(rt).scope) == []  # no conversation at all

    seen = await _second_process(tmp_path, "cust-42")
    assert seen["sessions_before"] == 0  # it shares no conversation history
    assert FACT in str(seen["recall"])
    assert FACT in str(seen["memory_section"])  # where persistent memory goes
    assert seen["recall_tokens"] == seen["block_tokens"] and int(str(seen["block_tokens"])) > 0


async def test_another_memory_id_does_not_recall_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path / "home", config(), clock=TrioClock()) as rt:
        await Solace(rt).remember("cust-42", FACT)

    seen = await _second_process(tmp_path, "cust-43")
    assert seen["recall"] == "" and seen["recall_tokens"] == 0
    assert FACT not in str(seen["memory_section"])
