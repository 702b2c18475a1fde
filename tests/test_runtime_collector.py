"""Opening a runtime runs without cyclic garbage collections, freezes what it opened
while it runs, and hands the collector back as it found it (solace.collector)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from solace import ReplayClock, open_runtime, runtime
from solace.collector import OpeningPause
from solace.config import Config, ModelsConfig, SubstrateConfig


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"))


@pytest.fixture
def collector_as_found() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.usefixtures("collector_as_found")
@pytest.mark.parametrize("enabled", [True, False])
async def test_an_open_runtime_has_its_objects_frozen_until_it_closes(
    tmp_path: Path, enabled: bool,
) -> None:
    (gc.enable if enabled else gc.disable)()
    gc.unfreeze()
    async with open_runtime(tmp_path, config(), clock=ReplayClock(), warm_up=False) as rt:
        assert gc.isenabled() is enabled  # as found, once open
        assert gc.get_freeze_count() > 0  # what it opened is skipped by collections
        await rt.observe("Caroline went to a pottery class.", author="Caroline")
    assert gc.get_freeze_count() == 0  # thawed at close: a dead cycle is collected
    assert gc.isenabled() is enabled


@pytest.mark.usefixtures("collector_as_found")
async def test_a_failed_open_hands_the_collector_back_without_freezing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def failing(*args: object, **kwargs: object) -> None:
        assert not gc.isenabled()  # paused while the projections open
        raise RuntimeError("a projection could not open")

    monkeypatch.setattr(runtime, "open_projections", failing)
    gc.enable()
    gc.unfreeze()
    with pytest.raises(RuntimeError, match="could not open"):
        async with open_runtime(tmp_path, config(), clock=ReplayClock(), warm_up=False):
            pass
    assert gc.isenabled() and gc.get_freeze_count() == 0


@pytest.mark.usefixtures("collector_as_found")
def test_a_pause_turns_the_collector_off_and_only_its_first_end_counts() -> None:
    gc.enable()
    gc.unfreeze()
    pause = OpeningPause()
    assert not gc.isenabled()
    pause.end(freeze=False)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    pause.end(freeze=True)  # a second end: nothing
    assert not gc.isenabled() and gc.get_freeze_count() == 0


@pytest.mark.usefixtures("collector_as_found")
async def test_a_close_writes_with_the_collector_off_and_thaws_after_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, tuple[bool, bool]] = {}
    real_snapshots, real_forms = runtime._snapshot_all, runtime.keep_retrieval_forms

    async def snapshots(*args: object) -> None:
        seen["snapshots"] = (gc.isenabled(), gc.get_freeze_count() > 0)
        await real_snapshots(*args)  # type: ignore[arg-type]

    async def forms(*args: object) -> None:
        seen["forms"] = (gc.isenabled(), gc.get_freeze_count() > 0)
        await real_forms(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(runtime, "_snapshot_all", snapshots)
    monkeypatch.setattr(runtime, "keep_retrieval_forms", forms)
    gc.enable()
    gc.unfreeze()
    async with open_runtime(tmp_path, config(), clock=ReplayClock(), warm_up=False) as rt:
        await rt.observe("Caroline went to a pottery class.", author="Caroline")
    # off while writing, the memory still frozen: no collection walks it meanwhile
    assert seen == {"snapshots": (False, True), "forms": (False, True)}
    assert gc.isenabled() and gc.get_freeze_count() == 0
