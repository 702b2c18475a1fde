"""Configuration: the embedded defaults, the TOML file, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from solace.config import AGENT_NAMES, Config, ConfigError, load_config

REPO = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "solace.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_config_file_spells_out_the_embedded_defaults() -> None:
    assert load_config(REPO / "config" / "solace.toml") == Config()


def test_per_agent_budgets_follow_the_seed() -> None:
    cfg = Config()
    assert set(cfg.agents) == set(AGENT_NAMES)
    assert cfg.agent("Supervisor").budget_tokens == 12000
    assert cfg.agent("Mood").budget_tokens == 2000
    assert cfg.agent("Time").budget_tokens == 256
    # Mood leans on emotional weight more than anyone else.
    assert cfg.agent("Mood").fade.emo == max(cfg.agent(a).fade.emo for a in AGENT_NAMES)


def test_a_partial_agent_section_keeps_that_agents_other_defaults(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, "[agents.Mood]\nbudget_tokens = 3000\n"))
    assert cfg.agent("Mood").budget_tokens == 3000
    assert cfg.agent("Mood").fade.emo == Config().agent("Mood").fade.emo
    assert cfg.agent("Supervisor") == Config().agent("Supervisor")


def test_unknown_key_is_an_error_naming_file_and_key(tmp_path: Path) -> None:
    p = write(tmp_path, "[substrate]\nfsnyc = 'always'\n")
    with pytest.raises(ConfigError) as info:
        load_config(p)
    assert str(p) in str(info.value)
    assert "substrate.fsnyc" in str(info.value)
    assert "unknown key" in str(info.value)


def test_value_outside_a_closed_set_names_key_and_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"substrate\.fsync: 'sometimes' is not one of"):
        load_config(write(tmp_path, "[substrate]\nfsync = 'sometimes'\n"))


def test_each_agent_keeps_its_own_perspective_and_a_bad_one_is_named(tmp_path: Path) -> None:
    cfg = Config()
    assert {a: cfg.agent(a).perspective for a in AGENT_NAMES} == {
        "Supervisor": "whole", "Main": "whole", "Mood": "affect", "Time": "time",
        "Mouth": "whole"}
    with pytest.raises(ConfigError, match=r"agents\.Mood\.perspective: 'valence' is not one of"):
        load_config(write(tmp_path, "[agents.Mood]\nperspective = 'valence'\n"))


def test_negative_budget_is_refused_with_key_and_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"agents\.Time: budget_tokens must be > 0, got -5"):
        load_config(write(tmp_path, "[agents.Time]\nbudget_tokens = -5\n"))


def test_a_negative_context_weight_is_refused_with_key_and_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"agents\.Main\.retrieval: context must be >= 0"):
        load_config(write(tmp_path, "[agents.Main]\nretrieval = { context = -0.1 }\n"))


def test_a_negative_recall_first_wait_is_refused_with_key_and_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"runtime: recall_first_ms must be >= 0, got -1"):
        load_config(write(tmp_path, "[runtime]\nrecall_first_ms = -1\n"))


def test_unknown_fade_weight_is_refused(tmp_path: Path) -> None:
    p = write(tmp_path, "[agents.Main]\nfade = { age = 1.0, boredom = 2.0 }\n")
    with pytest.raises(ConfigError, match=r"agents\.Main\.fade\.boredom: unknown key"):
        load_config(p)


def test_wrong_type_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"memory\.hnsw_m: expected an integer, got 'big'"):
        load_config(write(tmp_path, "[memory]\nhnsw_m = 'big'\n"))


def test_unknown_agent_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown agent 'Ego'"):
        load_config(write(tmp_path, "[agents.Ego]\nbudget_tokens = 10\n"))


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    p = write(tmp_path, "[substrate\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(p)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "absent.toml")


def test_openai_backend_requires_url_and_model(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs llm_base_url and llm_model"):
        load_config(write(tmp_path, "[models]\nllm_backend = 'openai-compatible'\n"))
