"""The README runs as written: its Python example runs in a fresh process against a temp
home, and it names every CLI command and every REPL command there is."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from solace.surfaces.cli.main import build_parser
from solace.surfaces.repl_commands import COMMANDS

README = Path(__file__).resolve().parents[1] / "README.md"
CONFIG = '[models]\nembedder = "hashing"\nllm_backend = "none"\n'


def fenced(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", README.read_text(), flags=re.S | re.M)


def test_every_code_block_is_closed() -> None:
    fences = [line for line in README.read_text().splitlines() if line.startswith("```")]
    assert len(fences) % 2 == 0
    assert all(opening != "```" for opening in fences[::2])  # each opens with a language
    assert all(closing == "```" for closing in fences[1::2])


@pytest.mark.slow
def test_the_python_example_runs_as_written(tmp_path: Path) -> None:
    (example,) = fenced("python")
    script = tmp_path / "example.py"
    script.write_text(example)
    (tmp_path / "solace.toml").write_text(CONFIG)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": "",
           "SOLACE_HOME": str(tmp_path / "home"), "SOLACE_CONFIG": str(tmp_path / "solace.toml")}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "Caroline: I went to a LGBTQ support group yesterday" in lines[0]  # best hit first
    assert lines[-1] == ("entry 1: agent=Caroline dia_id=D1:3: "
                         "I went to a LGBTQ support group yesterday")
    assert (tmp_path / "home" / "substrate").is_dir()


def _forms(parser: argparse.ArgumentParser, prefix: str) -> list[str]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [prefix]
    return [form for a in subs for name, child in a.choices.items()
            for form in _forms(child, f"{prefix} {name}")]


def test_the_readme_names_every_cli_command_and_its_options() -> None:
    (commands,) = [b for b in fenced("bash") if "solace recall" in b]
    parser = build_parser()
    for form in _forms(parser, "solace"):
        *head, last = form.split()
        pattern = re.escape(" ".join(head)) + r" (\S+\|)*" + re.escape(last) + r"\b"
        assert re.search(pattern, commands), f"README does not show `{form}`"
    for flag in ("--config", "--home", "--verbose", "--user", "--agent", "--org", "-k",
                 "--conversation", "--exit-on-eof", "--accept-loss", "--since"):
        assert flag in README.read_text(), flag


def test_the_readme_names_every_repl_command() -> None:
    text = README.read_text()
    for command in COMMANDS:
        if command.name:
            assert f"`{command.name}" in text, command.name
