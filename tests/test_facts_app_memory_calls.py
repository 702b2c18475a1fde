"""The application API's fact-memory calls: remember, recall, ids, facts, delete,
forget, consolidate, export, import; bad values refused by name with nothing
written; with memory off every call raises FactsDisabledError (the surfaces' 503)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from solace import TrioClock, open_runtime
from solace.app import FactsDisabledError, Solace
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.config.schema import FactsConfig
from solace.facts import (
    FACT_KIND,
    InvalidMemoryIdError,
    UnknownFactIdError,
    UnknownStoreError,
)
from solace.facts.transfer import ImportFileError


def config(*, enabled: bool = True) -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"), facts=FactsConfig(enabled=enabled))


async def test_the_operator_calls_list_delete_forget_export_and_import(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        added = await app.remember("acme", "The contract renews in March 2027.", importance=0.9)
        moved = await app.remember("acme", "The office is in Lisbon.")
        await trio.sleep(60)  # stated later (two values at one instant would conflict)
        await app.remember("acme", "The office is in Porto.")
        await app.remember("zeta", "The customer prefers invoices in French.")
        assert app.memory_ids() == ["acme", "zeta"]
        assert app.memory_ids(store="default") == ["acme", "zeta"]
        live = [f.text for f in app.memory_facts("acme")]
        assert live == ["The contract renews in March 2027.", "The office is in Porto."]
        history = app.memory_facts("acme", all=True)
        assert [f.status.value for f in history if f.fact_id == moved.fact.fact_id] == [
            "superseded"]
        (verdict,) = await app.consolidate("acme")  # one store, two live facts
        assert verdict.accepted or verdict.reason in (
            "unparsable", "empty", "not_smaller", "lost_salient")
        assert any("Porto" in f.text for f in app.memory_facts("acme"))
        assert any("March 2027" in f.text for f in app.memory_facts("acme"))
        block = await app.recall_facts("When does the contract renew?", "acme", k=1)
        assert [s.fact.fact_id for s in block.facts] == [added.fact.fact_id]
        exported = app.export_facts("acme")
        assert {r["id"] for r in exported} == {f.fact_id for f in history}
        assert (await app.delete_fact("acme", added.fact.fact_id)).fact_id == added.fact.fact_id
        with pytest.raises(UnknownFactIdError, match=added.fact.fact_id):
            await app.delete_fact("acme", added.fact.fact_id)
        assert await app.forget("zeta") == 1
        assert app.memory_ids() == ["acme"]
        results = await app.import_facts([
            {"memory_id": "crm-1", "text": "The customer's account manager is Rui.",
             "importance": 0.7, "at": "2026-01-05T10:00:00+00:00"},
            {"memory_id": "crm-2", "text": "The customer pays by bank transfer.", "at": 1.7e9},
            {"memory_id": "crm-1", "text": "The customer's account manager is Rui."},
        ], store="default")
        assert [(r.memory_id, r.write_class) for r in results] == [
            ("crm-1", "ADD"), ("crm-2", "ADD"), ("crm-1", "NOOP")]
        (rui,) = app.memory_facts("crm-1")
        assert rui.source == "import" and rui.mentions == 2


async def test_bad_values_are_refused_by_name_and_nothing_is_written(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        before = rt.substrate.last_id
        with pytest.raises(InvalidMemoryIdError, match="'a b'"):
            await app.remember("a b", "The user likes tea.")
        with pytest.raises(UnknownStoreError, match="'nowhere'"):
            await app.recall_facts("tea", "ada", store="nowhere")
        with pytest.raises(InvalidMemoryIdError, match="'bad id'"):
            await app.chat("Hello", memory="bad id")
        with pytest.raises(UnknownStoreError, match="'nowhere'"):
            await app.chat("Hello", memory="ada", memory_store="nowhere")
        with pytest.raises(ImportFileError, match="import row 1: .*'bad id'"):
            await app.import_facts([{"memory_id": "ok", "text": "The user likes tea."},
                                    {"memory_id": "bad id", "text": "x"}], store="default")
        with pytest.raises(ImportFileError, match="import row 0: field 'txt'"):
            await app.import_facts([{"memory_id": "ok", "txt": "typo"}], store="default")
        with pytest.raises(UnknownStoreError, match="'crm'"):
            await app.import_facts([{"memory_id": "ok", "text": "The user likes tea."}],
                                   store="crm")
        assert rt.substrate.last_id == before
        assert await rt.substrate.scan(kind=FACT_KIND) == []


async def test_with_memory_off_every_memory_call_raises_facts_disabled(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(enabled=False), clock=TrioClock()) as rt:
        app = Solace(rt)
        calls = [
            lambda: app.remember("ada", "The user likes tea."),
            lambda: app.recall_facts("tea", "ada"),
            lambda: app.delete_fact("ada", "f1"),
            lambda: app.forget("ada"),
            lambda: app.consolidate("ada"),
            lambda: app.import_facts([], "default"),
        ]
        for make in calls:
            with pytest.raises(FactsDisabledError, match="fact memory is off"):
                await make()
        for sync in (app.memory_ids, lambda: app.memory_facts("ada"),
                     lambda: app.export_facts("ada")):
            with pytest.raises(FactsDisabledError):
                sync()
        assert (await app.chat("Hello", memory="ada")).text  # a chat still proceeds
