"""The console's tri-state toggle, in headless Chromium against a real ``solace serve``:
each click is the user's move (grey -> teal -> red -> grey) and sets the manual flags;
an agent's attempt to override shows the guard's message; a deprecated topic is
``[DEPRECATED] <title>`` in the memory prefix; the states survive a server restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from console_support import Served, browser, serve
from playwright.sync_api import expect

from solace.conversation.curation import KEEP_MANUAL_MESSAGE

__all__ = ["browser"]  # the fixture, imported for pytest

pytestmark = pytest.mark.slow  # a server process and a browser


def _state(served: Served, topic_id: str) -> dict[str, Any]:
    (topic,) = [t for t in served.api("GET", "/topics")["topics"] if t["topic_id"] == topic_id]
    return dict(topic)


def test_the_toggle_cycles_its_states_and_they_persist_across_a_restart(
        tmp_path: Path, browser: Any) -> None:
    home = tmp_path / "home"
    served = serve(tmp_path, home)
    try:
        served.api("POST", "/chat", json={"message": "Let us plan the vegetable garden"})
        (topic,) = served.api("GET", "/topics")["topics"]
        tid, sid, title = topic["topic_id"], topic["session_id"], topic["title"]
        page = browser.new_page()
        page.goto(served.console)
        expect(page.locator("#auth-status")).to_have_text("token accepted")
        assert "token=" not in page.url  # the fragment is dropped from the address bar
        session = page.locator(f'#topics-table tr.session-row[data-session-id="{sid}"]')
        expect(session).to_have_text(f"session {sid}")  # topics grouped per session
        row = page.locator(f'#topics-table tr[data-topic-id="{tid}"]')
        toggle = row.locator("button.toggle")
        expect(toggle).to_have_attribute("data-state", "not-in-memory")
        expect(page.locator("#memory-prefix")).to_contain_text("no topic is in memory")

        toggle.click()  # grey -> teal
        expect(toggle).to_have_attribute("data-state", "promoted")
        expect(toggle).to_have_css("background-color", "rgb(15, 157, 143)")
        assert _state(served, tid)["keep_in_memory_manually_set"] is True
        expect(row.locator(".flags")).to_have_text("keep: user")

        # The agent's manage_topic_memory move cannot undo the user's choice.
        row.locator("select.agent-action").select_option("demote")
        row.locator("button.agent-try").click()
        guard = page.locator(f'#topics-table tr[data-topic-id="{tid}"] .guard-message')
        expect(guard).to_have_text(f"agent refused: {KEEP_MANUAL_MESSAGE}")
        assert _state(served, tid)["state"] == "promoted"

        toggle.click()  # teal -> red
        expect(toggle).to_have_attribute("data-state", "deprecated")
        expect(toggle).to_have_css("background-color", "rgb(217, 48, 37)")
        expect(page.locator("#memory-prefix")).to_have_text(f"- [DEPRECATED] {title}")
        assert served.api("GET", "/context/memory")["text"] == f"- [DEPRECATED] {title}"
        assert _state(served, tid)["deprecated_manually_set"] is True

        toggle.click()  # red -> grey
        expect(toggle).to_have_attribute("data-state", "not-in-memory")
        expect(toggle).to_have_css("background-color", "rgb(154, 160, 166)")
        assert served.api("GET", "/context/memory")["text"] == ""
        toggle.click()
        expect(toggle).to_have_attribute("data-state", "promoted")
        toggle.click()
        expect(toggle).to_have_attribute("data-state", "deprecated")
    finally:
        served.stop()

    served = serve(tmp_path, home)  # a new process, a new admin token, the same home
    try:
        page.goto(served.console)
        expect(page.locator("#auth-status")).to_have_text("token accepted")
        toggle = page.locator(f'#topics-table tr[data-topic-id="{tid}"] button.toggle')
        expect(toggle).to_have_attribute("data-state", "deprecated")
        expect(page.locator(f'#topics-table tr[data-topic-id="{tid}"] .flags')).to_have_text(
            "keep: user, deprecated: user")
        expect(page.locator("#memory-prefix")).to_have_text(f"- [DEPRECATED] {title}")
        assert served.api("GET", "/context/memory")["text"] == f"- [DEPRECATED] {title}"
        toggle.click()  # and it still cycles: red -> grey
        expect(toggle).to_have_attribute("data-state", "not-in-memory")
        page.close()
    finally:
        served.stop()
