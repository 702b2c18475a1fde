"""Every `solace` failure is one line on stderr, no traceback, and a distinct exit code
(2 usage, 1 error, 130 interrupted); `--verbose` adds the traceback; read-only commands
never create a home; --config/--home/--verbose work before or after the command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from solace.config import Config
from solace.home import Home
from substrate import KeySource, open_substrate

pytestmark = pytest.mark.slow  # each case starts a Python process

CONFIG = '[models]\nembedder = "hashing"\nllm_backend = "none"\n'
LINES = [
    {"speaker": "Ana", "text": "I adopted a greyhound called Pixel.", "at": "2023-05-08T13:56Z"},
    {"speaker": "Ben", "text": "Pixel is a great name for a dog.", "at": "2023-05-08T13:57Z"},
]


def solace(*args: str | Path, env: dict[str, str] | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": "", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "solace", *map(str, args)], capture_output=True, text=True,
        timeout=timeout, env=full_env, check=False,
    )


def assert_fails(done: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    """One line on stderr, no traceback, exit ``code``, each needle in the line."""
    err = done.stderr
    assert "Traceback" not in err, err
    assert done.returncode == code, (done.returncode, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with a config (`none` LLM, hashing embedder) and a filled home."""
    root = tmp_path_factory.mktemp("cli")
    (root / "solace.toml").write_text(CONFIG)
    (root / "talk.jsonl").write_text("".join(json.dumps(line) + "\n" for line in LINES))
    done = solace("--config", root / "solace.toml", "import", "jsonl", root / "talk.jsonl",
                  "--home", root / "home")
    assert done.returncode == 0, done.stderr
    (root / "a-file").write_text("not a directory\n")
    return root


def test_global_options_work_before_or_after_the_command(work: Path) -> None:
    cfg, home = work / "solace.toml", work / "home"
    before = solace("--config", cfg, "--home", home, "recall", "greyhound", "-k", "1")
    after = solace("recall", "greyhound", "-k", "1", "--home", home, "--config", cfg)
    assert before.returncode == after.returncode == 0, before.stderr + after.stderr
    assert "greyhound" in before.stdout and before.stdout == after.stdout
    mixed = solace("--config", cfg, "facts", "get", "--home", home)
    assert mixed.returncode == 0 and mixed.stdout == "(no durable facts)\n", mixed.stderr


# ------------------------------------------------------------ usage errors: exit 2


@pytest.mark.parametrize("argv, needle", [
    (["bogus"], "invalid choice: 'bogus'"),
    (["recall"], "required: query"),
    (["recall", "dog", "-k", "many"], "invalid int value: 'many'"),
    (["recall", "dog", "--agent", "Bob"], "unknown agent 'Bob'"),
    (["recall", "dog", "-k", "0"], "-k must be within 1..1000, got 0"),
    (["import"], "required: FORMAT"),
    (["substrate", "stats", "x", "--home", "y"], "unrecognized arguments: --home y"),
])
def test_usage_errors_exit_2_in_one_line(work: Path, argv: list[str], needle: str) -> None:
    done = solace("--config", work / "solace.toml", "--home", work / "home", *argv)
    assert_fails(done, 2, needle, "--help")


def test_no_command_prints_help_and_exits_2() -> None:
    done = solace()
    assert_fails(done, 2, "no command given")
    assert "usage: solace" in done.stdout


# -------------------------------------------------- a home that is not there: exit 1

READ_ONLY: list[list[str]] = [
    ["recall", "dog"], ["topics", "list"], ["topics", "show", "t1"], ["facts", "get"],
    ["facts", "get", "editor"], ["notes", "show", "t1"],
]


@pytest.mark.parametrize("argv", READ_ONLY, ids=" ".join)
def test_read_only_commands_refuse_a_missing_home_and_create_nothing(
    work: Path, tmp_path: Path, argv: list[str]
) -> None:
    typo = tmp_path / "hoem"
    done = solace("--config", work / "solace.toml", *argv, "--home", typo)
    assert_fails(done, 1, f"no Solace home at {typo}", f"solace run --home {typo}")
    assert not typo.exists()


@pytest.mark.parametrize("argv", READ_ONLY, ids=" ".join)
def test_read_only_commands_refuse_a_directory_without_a_substrate(
    work: Path, tmp_path: Path, argv: list[str]
) -> None:
    done = solace("--config", work / "solace.toml", *argv, "--home", tmp_path)
    assert_fails(done, 1, f"no Solace home at {tmp_path}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("verb", ["verify", "dump", "stats"])
def test_substrate_commands_refuse_a_missing_path(tmp_path: Path, verb: str) -> None:
    done = solace("substrate", verb, tmp_path / "nothing")
    assert_fails(done, 1, "not a substrate directory")
    assert not (tmp_path / "nothing").exists()


@pytest.mark.parametrize("argv", [
    ["run", "--exit-on-eof"], ["recall", "dog"], ["topics", "list"], ["facts", "get"],
    ["facts", "set", "editor", "helix"], ["import", "jsonl", "TALK"],
], ids=" ".join)
def test_a_home_that_is_a_file_is_one_line(work: Path, argv: list[str]) -> None:
    argv = [str(work / "talk.jsonl") if a == "TALK" else a for a in argv]
    done = solace("--config", work / "solace.toml", *argv, "--home", work / "a-file")
    assert_fails(done, 1, f"--home {work / 'a-file'} is a file, not a directory")


# ------------------------------------------------------------------- bad config files


@pytest.mark.parametrize("content, needle", [
    (None, "no such file"),
    ("DIR", "is a directory"),
    ("[models\n", "invalid TOML"),
    ("[models]\nembeder = 'hashing'\n", "unknown key"),
    ("[models]\nllm_backend = 'telepathy'\n", "telepathy"),
], ids=["missing", "directory", "bad-toml", "unknown-key", "bad-value"])
def test_a_bad_config_is_one_line(
    work: Path, tmp_path: Path, content: str | None, needle: str
) -> None:
    cfg = tmp_path / "bad.toml"
    if content == "DIR":
        cfg.mkdir()
    elif content is not None:
        cfg.write_text(content)
    for argv in (["recall", "dog"], ["topics", "list"], ["run", "--exit-on-eof"]):
        done = solace("--config", cfg, *argv, "--home", work / "home")
        assert_fails(done, 1, needle)


# ------------------------------------------------------------ holding, keys, imports


@pytest.fixture
def held(work: Path) -> Iterator[None]:
    """The filled home's substrate held open by this process (as `solace run` would)."""
    home = Home.at(work / "home", Config())
    sub = open_substrate(home.substrate_dir, key_source=KeySource(key_file=home.key_file,
                                                                  env_var=None))
    try:
        yield
    finally:
        sub.close()


@pytest.mark.parametrize("argv", [
    ["recall", "dog"], ["run", "--exit-on-eof"], ["topics", "list"], ["facts", "set", "a", "b"],
    ["import", "jsonl", "TALK"],
], ids=" ".join)
def test_a_home_another_process_holds_is_one_line(
    work: Path, held: None, argv: list[str]
) -> None:
    argv = [str(work / "talk.jsonl") if a == "TALK" else a for a in argv]
    done = solace("--config", work / "solace.toml", *argv, "--home", work / "home")
    assert_fails(done, 1, "another process holds this home", "solace run",
                 "solace serve")


def test_the_wrong_key_is_one_line(work: Path) -> None:
    wrong = {"SOLACE_SUBSTRATE_KEY": "ab" * 32}
    for argv in (["recall", "dog"], ["topics", "list"]):
        done = solace("--config", work / "solace.toml", *argv, "--home", work / "home",
                      env=wrong)
        assert_fails(done, 1, "AES-GCM authentication failed")


WriteFile = Callable[[Path], None]


@pytest.mark.parametrize("fmt, content, needle", [
    ("locomo", "this is not json\n", "not JSON"),
    ("locomo", json.dumps({"a": 1}), "not LoCoMo: expected a JSON list"),
    ("locomo", json.dumps([{"sample_id": "c1", "conversation": []}]),
     "conversation #1 (c1): 'conversation' should be dict"),
    ("locomo", json.dumps([{"sample_id": "c1", "conversation": {
        "session_1_date_time": "yesterday", "session_1": [
            {"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}}]),
     "session 1: not a LoCoMo session date: 'yesterday'"),
    ("locomo", b"\xff\xfe\x00garbage", "not UTF-8"),
    ("jsonl", '{"speaker": "A", "text": "hi", "at": 0}\n[1, 2]\n', "line 2: expected an object"),
    ("jsonl", '{"speaker": "A", "text": "hi"}\n', "line 1: missing 'at'"),
    ("jsonl", '\n{"speaker": "A", "text": "hi", "at": "soon"}\n{oops\n',
     "line 2: \"at\" is not an ISO 8601 date-time: 'soon' (and 1 more bad lines)"),
    ("jsonl", '{"speaker": "A", "text": "   ", "at": 0}\n', "line 1: text"),
], ids=["not-json", "not-a-list", "no-conversation", "bad-date", "binary", "not-object",
        "missing-at", "bad-at", "blank-text"])
def test_a_file_that_is_not_the_format_is_one_line_and_touches_no_home(
    work: Path, tmp_path: Path, fmt: str, content: str | bytes, needle: str
) -> None:
    path = tmp_path / f"data.{fmt}"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    home = tmp_path / "home"
    done = solace("--config", work / "solace.toml", "import", fmt, path, "--home", home)
    assert_fails(done, 1, str(path), needle)
    assert not home.exists()


def test_importing_a_missing_file_is_one_line(work: Path, tmp_path: Path) -> None:
    done = solace("--config", work / "solace.toml", "import", "locomo", tmp_path / "nope.json",
                  "--home", tmp_path / "home")
    assert_fails(done, 1, f"no such file {tmp_path / 'nope.json'}")


def test_verbose_adds_the_traceback_above_the_line(work: Path, tmp_path: Path) -> None:
    done = solace("--verbose", "--config", work / "solace.toml", "recall", "dog",
                  "--home", work / "a-file")
    assert done.returncode == 1
    assert "Traceback" in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("solace recall: --home ")


# ----------------------------------------------------- exception groups, in-process


def test_a_trio_exception_group_is_shown_as_its_one_real_error() -> None:
    import trio

    from solace.config import ConfigError
    from solace.surfaces.cli.errors import describe, unwrap

    real = ConfigError("x.toml", "models.llm_backend", "unknown backend 'telepathy'")
    group = BaseExceptionGroup("outer", [
        trio.Cancelled._create(),
        ExceptionGroup("inner", [real]),
    ])
    assert unwrap(group) is real
    line, code = describe(group, "solace recall")
    assert code == 1 and line.startswith("solace recall: ") and "telepathy" in line
    assert "\n" not in line


def test_ctrl_c_anywhere_in_a_group_is_exit_130() -> None:
    from solace.surfaces.cli.errors import describe

    group = BaseExceptionGroup("outer", [ValueError("later"), KeyboardInterrupt()])
    assert describe(group, "solace recall") == ("solace recall: interrupted", 130)
    assert describe(KeyboardInterrupt(), "solace run")[1] == 130


def test_an_unexpected_error_is_still_one_line_pointing_at_verbose() -> None:
    from solace.surfaces.cli.errors import describe

    line, code = describe(ZeroDivisionError("division by zero\nsecond line"), "solace recall")
    assert code == 1 and "\n" not in line
    assert "unexpected ZeroDivisionError" in line and "--verbose" in line
