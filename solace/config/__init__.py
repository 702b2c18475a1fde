"""Configuration: frozen dataclasses built once from TOML at start-up.

Nothing is read at import time; :func:`load_config` is called by whoever starts
the runtime and the result is passed down as a typed object.
"""

from __future__ import annotations

from pathlib import Path

from .loader import ConfigError, build, read_toml
from .schema import (
    AGENT_NAMES,
    AgentConfig,
    Config,
    ConversationConfig,
    FadeWeights,
    MemoryConfig,
    ModelsConfig,
    Perspective,
    RetrievalWeights,
    RuntimeConfig,
    SubstrateConfig,
)

__all__ = [
    "AGENT_NAMES",
    "AgentConfig",
    "Config",
    "ConfigError",
    "ConversationConfig",
    "FadeWeights",
    "MemoryConfig",
    "ModelsConfig",
    "Perspective",
    "RetrievalWeights",
    "RuntimeConfig",
    "SubstrateConfig",
    "load_config",
]


def load_config(path: str | Path | None = None) -> Config:
    """Load the configuration.

    Args:
        path: a TOML file; keys it leaves out keep the embedded defaults.
            ``None`` returns the embedded defaults (the values spelled out in
            ``config/solace.toml``).

    Raises:
        ConfigError: naming the file, the key and the bad value.
    """
    if path is None:
        return Config()
    return build(Config, read_toml(path), file=str(path))
