"""Issue 10 §Privacy: no workspace file ever holds credentials, API keys, tokens,
passwords, private keys or internal IP addresses. Every write passes one secret
detector, the same function Mouth's speech filter uses; each class is planted."""

from __future__ import annotations

from pathlib import Path

import pytest

from solace.actors import mouth_filter
from solace.actors.mouth_filter import SECRET_CLASSES, looks_like_credential, to_speech
from solace.conversation import events as cev
from solace.workspace import files, markdown, now
from tests.workspace_fixtures import SCOPE, ManualClock, every_file, workspace_home

PLANTED = [
    ("api_key", "sk-proj-abcdefghijklmnopqrstuvwx1234"),
    ("api_key", "AKIAIOSFODNN7EXAMPLE"),
    ("api_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("token", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijk"),
    ("token", "Bearer abcdefghijklmnop1234"),
    ("password", "password: hunter2"),
    ("password", "my password is tr0ub4dor"),
    ("password", "postgres://admin:s3cretpw@db.example.com/app"),
    ("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----"),
    ("internal_ip", "10.0.3.17"),
    ("internal_ip", "192.168.1.20"),
    ("internal_ip", "172.20.0.5"),
    ("internal_ip", "fd12:3456:789a::1"),
]


def test_the_detector_names_the_five_classes_of_the_issue() -> None:
    assert set(SECRET_CLASSES) == {"api_key", "token", "password", "private_key",
                                   "internal_ip"}
    assert {c for c, _ in PLANTED} == set(SECRET_CLASSES)


def test_the_workspace_uses_mouths_one_detector() -> None:
    for module in (markdown, files, now):
        assert module.looks_like_credential is mouth_filter.looks_like_credential


@pytest.mark.parametrize(("kind", "secret"), PLANTED)
def test_each_class_is_caught_and_never_spoken(kind: str, secret: str) -> None:
    assert looks_like_credential(f"the value is {secret} ok"), kind
    assert secret not in to_speech(f"Sure.\nIt is {secret}.\nBye.").text


@pytest.mark.parametrize("line", [
    "I have 2 cats and 1234567890 reasons.", "The token count is small.",
    "My password manager is great", "Call me at 555-1234", "Serving on 127.0.0.1:8080",
    "We met at 10 am on 10.05.1990", "Public DNS is 8.8.8.8", "version 1.10.2",
])
def test_ordinary_text_is_not_a_secret(line: str) -> None:
    assert not looks_like_credential(line)


async def test_a_planted_secret_of_each_class_is_absent_from_every_file(tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path / "home", clock) as b:
        for n, (_, secret) in enumerate(PLANTED):
            await b.remember(f"Caroline's server {n} uses {secret} for access.")
            await b.remember(f"Caroline likes harmless thing number {n}.")
            session, topic = f"s{n}", f"t{n}"
            await b.conversation(
                cev.open_topic(SCOPE, session, topic, origin="new", title=f"Setup {secret}"),
                cev.activate_topic(SCOPE, session, topic),
                cev.message(SCOPE, session, topic, "user", f"the key is {secret}"),
                cev.note(SCOPE, session, topic, "$set", f"Remember {secret}\nKeep notes {n}"),
                cev.summary(SCOPE, session, topic, title=f"Setup {secret}",
                            text=f"Caroline set up server {n}. It answers on {secret}.",
                            mode="llm", include=True, keep=True, count=6, close=True),
                cev.fact_set(SCOPE, f"server{n}", f"login {secret}"),
            )
            clock.t += 3600
        await b.ws.heartbeat()
        await b.ws.write_now()
        await b.ws.synthesize()
        await b.ws.rollup()
        await b.ws.export(tmp_path / "export")
        texts = {name: data for name, data in every_file(tmp_path).items()}
        workspace_text = "".join(data.decode() for name, data in texts.items()
                                 if name.endswith(".md"))
        assert "Caroline likes harmless thing number 12." in workspace_text  # not silent
        assert "Keep notes 12" in workspace_text
        assert b.ws.counters["withheld"] > 0
        for kind, secret in PLANTED:
            needle = secret.split(": ")[-1].split(" ")[-1].encode()
            for name, data in texts.items():
                assert needle not in data, f"{kind} {secret!r} found in {name}"


async def test_a_secret_typed_into_a_file_is_not_recorded_and_leaves_at_the_next_render(
        tmp_path: Path) -> None:
    clock = ManualClock()
    async with workspace_home(tmp_path, clock) as b:
        await b.remember("Caroline plays chess.")
        day = next((b.files / "memory").glob("*.md"))
        day.write_text(day.read_text() + "- the router is at 192.168.7.1\n- Caroline likes go.\n")
        (b.files / "USER.md").write_text("# USER\n- Prefers tea.\n- password: swordfish\n")
        edits = await b.ws.reload()
        by_file = {e.file: e for e in edits}
        assert by_file[f"memory/{day.name}"].withheld == 1
        assert [t for _, t in by_file[f"memory/{day.name}"].added] == ["Caroline likes go."]
        assert by_file["USER.md"].withheld == 1
        dump = "".join(e.content for e in await b.substrate.scan(kind="workspace"))
        assert "192.168.7.1" not in dump and "swordfish" not in dump
        ctx = await b.ws.session_context(session_type="main")
        assert "Prefers tea." in ctx.stable and "swordfish" not in ctx.stable
        await b.remember("Caroline plays the cello.")  # the day's next render
        text = day.read_text()
        assert "192.168.7.1" not in text
        assert "- Caroline likes go." in text and "- Caroline plays the cello." in text
