"""`solace recall --tag TAG` (repeatable) narrows long-term search to records carrying
any of the tags, on the home itself or through a serving process (POST /recall with
"tags"); a blank --tag is a usage error."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import trio
from runtime_support import START

import solace.surfaces.cli.remote as remote_module
from solace import ReplayClock, load_config, open_runtime
from solace.surfaces.cli.main import main

CONFIG = """\
[models]
embedder = "hashing"
llm_backend = "none"
[substrate]
fsync = "never"
[runtime]
read_through = false
[agents.Main]
budget_tokens = 30
"""
QUERY = "quarterly budget report"
LINES = [
    ("Caroline", "The quarterly numbers for the client are due on Friday.", ("work",)),
    ("Melanie", "My quarterly budget report for the book club is finished.", ()),
    ("Caroline", "I moved here from Sweden four years ago.", ()),
    ("Melanie", "We finally bought a violin for my daughter.", ()),
    ("Caroline", "The adoption agency called me back about the interview.", ()),
    ("Melanie", "The museum trip with the kids was wonderful.", ()),
]


def faded_home(tmp_path: Path) -> tuple[Path, Path]:
    """A home whose Main has LINES, the first three faded to long-term; its config."""
    config_file = tmp_path / "solace.toml"
    config_file.write_text(CONFIG)
    home = tmp_path / "home"

    async def fill() -> None:
        async with open_runtime(home, load_config(config_file), clock=ReplayClock(START)) as rt:
            for i, (speaker, text, tags) in enumerate(LINES):
                await rt.agent("Main").observe(text, speaker=speaker, tags=tags,
                                               at=START + timedelta(hours=5 * i))
            await rt.settle()
            faded = " ".join(r.text for r in rt.memories["Main"].longterm.records())
            assert "budget report" in faded and "quarterly numbers" in faded

    trio.run(fill)
    return home, config_file


def recall(capsys: pytest.CaptureFixture[str], config: Path, home: Path, *args: str
           ) -> tuple[int, str, str]:
    code = main(["--config", str(config), "recall", QUERY, *args, "--home", str(home)])
    out, err = capsys.readouterr()
    return code, out, err


def test_tag_narrows_longterm_hits_on_the_home(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    home, config = faded_home(tmp_path)
    code, plain, err = recall(capsys, config, home)
    assert code == 0, err
    assert "budget report" in plain and "quarterly numbers" in plain
    code, narrowed, err = recall(capsys, config, home, "--tag", "nope", "--tag", "Work")
    assert code == 0, err
    assert "budget report" not in narrowed  # untagged, in long-term: not searched
    assert "quarterly numbers" in narrowed.splitlines()[0]
    assert "museum trip" in narrowed  # working records still compete


def test_tag_goes_to_a_serving_process_in_the_recall_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, str, Any, Any]] = []

    class Server:
        def call(self, method: str, path: str, *, params: Any = None, body: Any = None
                 ) -> Any:
            calls.append((method, path, params, body))
            return {"hits": []}

    monkeypatch.setattr(remote_module, "local_or_remote",
                        lambda home, local, remote: remote(Server()))
    home, config = faded_home(tmp_path)
    code, out, err = recall(capsys, config, home, "--tag", "work", "--tag", "home")
    assert (code, out) == (0, "(nothing recalled)\n"), err
    code, out, err = recall(capsys, config, home)
    assert code == 0, err
    assert calls == [
        ("POST", "/recall", None,
         {"query": QUERY, "agent": "Main", "k": 10, "tags": ["work", "home"]}),
        ("GET", "/recall", {"query": QUERY, "agent": "Main", "k": 10}, None),
    ]


def test_a_blank_tag_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    code, out, err = recall(capsys, config, tmp_path / "nowhere", "--tag", " ")
    assert code == 2 and "a --tag is blank: [' ']" in err
