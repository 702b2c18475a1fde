"""Screenshots of the web console for the README: ``docs/console.png`` (the whole page)
and ``docs/console-recall.png`` (the recall playground with a source event open).

Starts ``solace serve`` on a temporary home (hashing embedder, no LLM), fills it with a
few dated messages, a curated topic, a durable fact, a note and fact memory for one
id, then drives Debian's Chromium through Playwright. Run:
``HF_HUB_OFFLINE=1 .venv/bin/python scripts/console_screenshots.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("SOLACE_CHROMIUM", "/usr/bin/chromium")
CONFIG = '[models]\nembedder = "hashing"\nllm_backend = "none"\n'
MESSAGES = [
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful.", 8),
    ("Melanie", "That's great! What did you take away from it?", 8),
    ("Caroline", "The transgender stories were inspiring; I want to work in counseling.", 8),
    ("Melanie", "I painted a sunrise over the lake last week, my kids loved it.", 9),
    ("Caroline", "I'm researching adoption agencies, I'd love to give a child a home.", 12),
]


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="solace-console-"))
    (tmp / "solace.toml").write_text(CONFIG)
    home = tmp / "home"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""}
    with (tmp / "serve.log").open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "solace.surfaces.cli.main", "--config", str(tmp / "solace.toml"),
             "serve", "--home", str(home), "--port", "0"],
            stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    try:
        assert proc.stdout is not None
        print(proc.stdout.readline().strip())
        info = json.loads((home / "serve.json").read_text())
        shoot(info["url"], info["admin_token"])
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        if proc.stdout is not None:
            proc.stdout.close()


def shoot(url: str, token: str) -> None:
    client = httpx.Client(base_url=url, timeout=60,
                          headers={"Authorization": f"Bearer {token}"})

    def call(method: str, path: str, **kw: Any) -> Any:
        r = client.request(method, path, **kw)
        r.raise_for_status()
        return r.json()

    for speaker, text, day in MESSAGES:
        at = datetime(2023, 5, day, 14, 0, tzinfo=UTC).timestamp()
        call("POST", "/observe", json={"text": text, "speaker": speaker, "at": at})
    call("POST", "/chat", json={"message": "Let us plan the garden: tomatoes by the wall"})
    topic = call("GET", "/topics")["topics"][0]
    call("POST", f"/topics/{topic['topic_id']}/curate", json={"action": "promote"})
    call("POST", f"/topics/{topic['topic_id']}/notes", json={"text": "tomatoes by the wall"})
    call("PUT", "/facts/pet", json={"value": "a cat called Biscuit"})
    for text in ("Alice works as a nurse in Leeds", "Alice's dog is called Rex",
                 "Alice is allergic to penicillin"):
        call("POST", "/memory/alice/remember", json={"text": text})

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/#token={token}")
        expect(page.locator("#auth-status")).to_have_text("token accepted")
        row = page.locator("#topics-table tr[data-topic-id]").first
        row.locator("select.agent-action").select_option("demote")
        row.locator("button.agent-try").click()
        expect(row.locator(".guard-message")).not_to_be_empty()
        page.locator('#memory-ids button[data-memory-id="alice"]').click()
        expect(page.locator("#memory-facts tbody tr")).to_have_count(3)
        page.fill("#recall-query", "support group counseling")
        page.click("#recall-go")
        page.locator("#recall-hits button.show-event").first.click()
        expect(page.locator("#event-view")).to_be_visible()
        for _ in range(4):  # a few fade-view samples for the over-time line
            page.click("#fade-refresh")
            page.wait_for_timeout(300)
        page.evaluate("window.scrollTo(0, 0)")  # the sticky header at the top
        page.screenshot(path=str(ROOT / "docs" / "console.png"), full_page=True)
        page.locator("#recall").screenshot(path=str(ROOT / "docs" / "console-recall.png"))
        browser.close()
    print("wrote docs/console.png and docs/console-recall.png")


if __name__ == "__main__":
    main()
