"""The facts benchmark runs end to end in --quick mode and writes its JSON and PNG."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quick_run_writes_every_section(tmp_path: Path) -> None:
    out, plot = tmp_path / "facts.json", tmp_path / "growth.png"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "facts_bench.py"), "--quick",
         "--out", str(out), "--plot", str(plot)],
        capture_output=True, text=True, timeout=600, check=False,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    res = json.loads(out.read_text(encoding="utf-8"))
    assert {"updates", "growth", "compaction", "cost"} <= set(res)
    groups = res["updates"]["groups"]
    assert groups["templated/remember"]["solace"]["n"] == 2 * 12
    assert groups["templated/remember"]["append_only"]["n"] == 2 * 12
    assert res["growth"]["points"][-1]["append_only_facts"] == 200
    assert res["compaction"]["ids"] == 3
    alone = res["compaction"]["alone"]  # the compactor handed the corpus as written
    assert alone["ids"] == 3 and alone["tokens_before"] == res["compaction"]["tokens_written"]
    assert 0 < alone["tokens_after"] <= alone["tokens_before"]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "2. Knowledge updates" in done.stdout
