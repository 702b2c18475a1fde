"""Delete and forget are data-subject requests: afterwards the text is unrecoverable from
anything under the home, including the decrypted substrate (issue 9 §9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solace.facts import UnknownFactIdError
from tests.facts_fixtures import ManualClock, decrypted_dump, fact_memory, home_bytes

SECRET = "Zoe's passport number is XK4471923."
KEPT = "Zoe prefers window seats."


def _absent_everywhere(root: Path, text: str) -> None:
    needles = [text.encode(), text.split()[-1].rstrip(".").encode()]
    for name, data in home_bytes(root).items():
        for needle in needles:
            assert needle not in data, f"{needle!r} found in {name}"
    dump = decrypted_dump(root)
    for needle in needles:
        assert needle.decode() not in dump


async def test_fact_text_is_never_plaintext_in_the_substrate(tmp_path: Path) -> None:
    async with fact_memory(tmp_path) as fm:
        await fm.remember("zoe", SECRET)
    _absent_everywhere(tmp_path, SECRET)


async def test_a_deleted_fact_is_unrecoverable_and_the_others_stay(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, clock=clock) as fm:
        secret = await fm.remember("zoe", SECRET)
        await fm.remember("zoe", KEPT)
        await fm.delete("zoe", secret.fact.fact_id)
        assert [f.text for f in fm.facts("zoe", include_history=True)] == [KEPT]
    _absent_everywhere(tmp_path, SECRET)
    async with fact_memory(tmp_path, clock=clock) as fm:  # a new process: still gone
        assert [f.text for f in fm.facts("zoe", include_history=True)] == [KEPT]
        assert "window" in (await fm.recall("Which seat does Zoe like?", "zoe")).text
    assert '<attr name="op">delete</attr>' in decrypted_dump(tmp_path)


async def test_a_forgotten_id_leaves_nothing_readable(tmp_path: Path) -> None:
    async with fact_memory(tmp_path) as fm:
        await fm.remember("zoe", SECRET)
        await fm.remember("zoe", KEPT)
        await fm.remember("other", "Yann likes jazz.")
        assert await fm.forget("zoe") == 2
        assert fm.facts("zoe", include_history=True) == []
        assert fm.memory_ids() == ["other"]
    _absent_everywhere(tmp_path, SECRET)
    _absent_everywhere(tmp_path, KEPT)
    async with fact_memory(tmp_path) as fm:
        assert fm.memory_ids() == ["other"]


async def test_deleting_an_unknown_fact_names_it_and_changes_nothing(tmp_path: Path) -> None:
    async with fact_memory(tmp_path) as fm:
        await fm.remember("zoe", KEPT)
        before = home_bytes(tmp_path)
        with pytest.raises(UnknownFactIdError, match="'f000'"):
            await fm.delete("zoe", "f000")
        assert home_bytes(tmp_path) == before
