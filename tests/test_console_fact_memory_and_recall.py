"""The console's fact memory, recall playground, fade view and substrate status, in
headless Chromium against a real ``solace serve``: a fact deleted in the console leaves
recall (the API's recall no longer finds it); consolidate answers; recall hits show
rung, score parts, date and speaker, and the source event's raw text is a click away;
the fade view shows working tokens against the budget (over time, from the server's
history) and records per rung; the substrate verifies."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from console_support import Served, browser, serve
from playwright.sync_api import expect

__all__ = ["browser"]  # the fixture, imported for pytest

pytestmark = pytest.mark.slow  # a server process and a browser

RAW = "I went to a LGBTQ support group yesterday.\n\n  It was  so powerful."


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("console")
    served = serve(tmp, tmp / "home")
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture
def page(browser: Any, served: Served) -> Iterator[Any]:
    page = browser.new_page()
    page.on("dialog", lambda dialog: dialog.accept())  # the delete button's confirm()
    page.goto(served.console)
    expect(page.locator("#auth-status")).to_have_text("token accepted")
    try:
        yield page
    finally:
        page.close()


def _recalled(served: Served, memory: str, query: str) -> list[dict[str, Any]]:
    return list(served.api("POST", f"/memory/{memory}/recall", json={"query": query})["facts"])


def _fade_settled(served: Served, query: str, entry: int) -> None:
    """Wait until recall's first hit for ``entry`` stays the same (rung, tier, events)
    across two recalls 0.3 s apart: the fade has finished moving it, so the page's
    recall and the API's below see the same hit."""
    def first() -> tuple[Any, ...]:
        hits = served.api("GET", "/recall", params={"query": query})["hits"]
        return next(((h["rung"], h["tier"], tuple(h["entry_ids"])) for h in hits
                     if entry in h["entry_ids"]), ())

    deadline, last = time.monotonic() + 20, first()
    while time.monotonic() < deadline:
        time.sleep(0.3)
        now = first()
        if now == last and now:
            return
        last = now
    raise AssertionError(f"recall of event {entry} did not settle: last saw {last}")


def test_a_fact_deleted_in_the_console_leaves_recall(served: Served, page: Any) -> None:
    kept = served.api("POST", "/memory/alice/remember",
                      json={"text": "Alice works as a nurse in Leeds"})["fact"]
    gone = served.api("POST", "/memory/alice/remember",
                      json={"text": "Alice's dog is called Biscuit"})["fact"]
    assert gone["id"] in {f["id"] for f in _recalled(served, "alice", "dog Biscuit")}

    page.reload()  # the page loaded before alice had facts
    page.locator('#memory-ids button[data-memory-id="alice"]').click()
    rows = page.locator("#memory-facts tbody tr")
    expect(rows).to_have_count(2)
    row = page.locator(f'#memory-facts tr[data-fact-id="{gone["id"]}"]')
    expect(row.locator(".fact-text")).to_have_text("Alice's dog is called Biscuit")
    expect(row).to_have_attribute("data-status", "live")
    row.locator("button.delete-fact").click()
    expect(row).to_have_count(0)
    expect(rows).to_have_count(1)

    recalled = {f["id"] for f in _recalled(served, "alice", "dog Biscuit")}
    assert gone["id"] not in recalled
    assert kept["id"] in {f["id"] for f in _recalled(served, "alice", "nurse Leeds")}

    page.locator("#consolidate").click()
    expect(page.locator("#consolidate-result")).to_be_visible()
    expect(page.locator("#consolidate-result")).not_to_be_empty()
    expect(page.locator("#error-bar")).to_be_hidden()


def test_recall_hits_show_their_parts_and_the_raw_event_is_a_click_away(
        served: Served, page: Any) -> None:
    at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()
    entry = served.api("POST", "/observe", json={"text": RAW, "speaker": "Caroline",
                                                 "at": at})["entry_id"]
    _fade_settled(served, "LGBTQ support group", entry)  # a 2023 turn fades at once
    page.fill("#recall-query", "LGBTQ support group")
    page.click("#recall-go")
    hit = page.locator("#recall-hits tr.hit", has=page.locator(
        f'button.show-event[data-entry-id="{entry}"]')).first
    expect(hit).to_be_visible()
    expect(hit.locator(".date")).to_contain_text("2023-05-08T13:56")
    expect(hit.locator(".speakers")).to_have_text("Caroline")
    (api_hit,) = [h for h in served.api("GET", "/recall", params={
        "query": "LGBTQ support group"})["hits"] if entry in h["entry_ids"]][:1]
    expect(hit.locator(".rung")).to_have_text(f"{api_hit['rung']} ({api_hit['tier']})")
    assert float(hit.locator(".score").text_content()) == pytest.approx(api_hit["score"],
                                                                         abs=6e-4)
    expect(hit.locator(".parts")).to_have_text(
        re.compile(r"^(-?\d+\.\d{3} / ){5}-?\d+\.\d{3}$"))  # the six parts
    hit.locator(f'button.show-event[data-entry-id="{entry}"]').click()
    expect(page.locator("#event-view")).to_be_visible()
    assert page.locator("#event-text").text_content() == RAW  # byte for byte
    expect(page.locator("#event-meta")).to_contain_text("Caroline")


def test_the_fade_view_and_substrate_status_show(served: Served, page: Any) -> None:
    main = page.locator('#fade-table tr[data-agent="Main"]')
    stats = served.api("GET", "/inspect", params={"agent": "Main"})["Main"]
    expect(main.locator(".tokens")).to_have_text(
        re.compile(rf"^\d+ / {stats['budget_tokens']}$"))
    expect(main.locator(".working-rungs")).to_contain_text("r0:")
    expect(page.locator("#fade-table tbody tr")).to_have_count(5)
    # The line is the server's history of working tokens (kept since the process
    # started, one point per change), not what this page happened to sample: a page
    # loaded once already draws many points.
    history = stats["fade_history"]
    assert len(history) >= 2 and all(len(p) == 3 for p in history)
    points = main.locator("svg.spark polyline").get_attribute("points")
    assert points is not None and len(points.split()) >= 2
    status = page.locator("#verify-status")
    expect(status).to_have_class("ok")
    last = served.api("GET", "/stats")["events"]
    expect(status).to_contain_text("verified:")
    assert int(status.text_content().split("last id ")[1].split(",")[0]) <= last


def test_durable_facts_and_notes_are_edited_in_the_console(served: Served, page: Any) -> None:
    served.api("POST", "/chat", json={"message": "Let us plan the garden"})
    page.reload()  # the page loaded before the topic existed
    page.fill("#fact-key", "pet")
    page.fill("#fact-value", "a cat called Biscuit")
    page.click("#fact-form button[type=submit]")
    expect(page.locator('#durable-facts li[data-key="pet"]')).to_contain_text(
        "pet = a cat called Biscuit")
    assert {"key": "pet", "value": "a cat called Biscuit"} in served.api("GET", "/facts")["facts"]
    (topic,) = served.api("GET", "/topics")["topics"]
    expect(page.locator("#notes-topic")).to_have_value(topic["topic_id"])
    page.fill("#note-text", "tomatoes by the wall")
    page.click("#note-form button[type=submit]")
    expect(page.locator("#notes-text")).to_contain_text("tomatoes by the wall")
    assert "tomatoes by the wall" in served.api(
        "GET", f"/topics/{topic['topic_id']}/notes")["notes"]
    page.locator('#durable-facts li[data-key="pet"] button.unset-fact').click()
    expect(page.locator('#durable-facts li[data-key="pet"]')).to_have_count(0)
    assert served.api("GET", "/facts")["facts"] == []
