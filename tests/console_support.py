"""A real ``solace serve`` subprocess and headless Chromium (Playwright) for the web
console's tests.

Chromium is the Debian ``chromium`` package (``scripts/setup.sh`` installs it), never a
Playwright browser download: ``executable_path`` points at it. Without it the tests
skip saying so. The server runs the hashing embedder and no LLM, with its log in a
file (a pipe nobody reads would fill and stall it).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

CONFIG = ('[models]\nembedder = "hashing"\nllm_backend = "none"\n\n'
          '[substrate]\nfsync = "never"\n')
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def chromium_path() -> str | None:
    """The Chromium binary: ``$SOLACE_CHROMIUM``, the Debian package's, or on PATH."""
    for path in (os.environ.get("SOLACE_CHROMIUM"), *CHROMIUM_CANDIDATES,
                 shutil.which("chromium"), shutil.which("chromium-browser")):
        if path and os.access(path, os.X_OK):
            return path
    return None


@dataclass
class Served:
    """One ``solace serve`` process: its URL, admin token and an API client."""

    proc: subprocess.Popen[str]
    url: str
    token: str
    log: Path

    @property
    def console(self) -> str:
        """The console's address with the token in the fragment (never sent to the server)."""
        return f"{self.url}/#token={self.token}"

    def api(self, method: str, path: str, **kwargs: Any) -> Any:
        r = httpx.request(method, self.url + path, timeout=60,
                          headers={"Authorization": f"Bearer {self.token}"}, **kwargs)
        assert r.status_code < 300, f"{method} {path}: {r.status_code} {r.text}"
        return r.json()

    def stop(self) -> None:
        """SIGTERM, and check it stopped cleanly (exit 0, no traceback)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        log = self.log.read_text(errors="replace")
        assert self.proc.returncode == 0, log[-3000:]
        assert "Traceback" not in log, log[-3000:]


def serve(tmp_path: Path, home: Path) -> Served:
    """Start ``solace serve --port 0`` on ``home``; returns once it listens."""
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    log = tmp_path / f"serve-{len(list(tmp_path.glob('serve-*.log')))}.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""}
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "solace.surfaces.cli.main", "--config", str(config), "serve",
             "--home", str(home), "--port", "0"],
            stdout=subprocess.PIPE, stderr=err, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "Solace is serving on http://127.0.0.1:" in line, line + log.read_text()
    info = json.loads((home / "serve.json").read_text())
    return Served(proc, info["url"], info["admin_token"], log)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium from the Debian package (skips, saying why, without it)."""
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium binary (/usr/bin/chromium): run scripts/setup.sh as root, "
                    "or set SOLACE_CHROMIUM")
    from playwright.sync_api import sync_playwright  # a dev dependency: missing is a failure

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=path, headless=True,
                                      args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield chromium
        finally:
            chromium.close()
