"""A real ``solace serve`` on 127.0.0.1 (a free port) and a real HTTP client, for the
HTTP tests. Small models (hashing embedder, no LLM) keep them fast."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import trio

from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.surfaces.http import Serving, serve


def small_config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
    )


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@asynccontextmanager
async def running(home: Path, config: Config | None = None, **options: Any
                  ) -> AsyncIterator[tuple[Serving, httpx.AsyncClient]]:
    """Serve ``home`` for the block (``config``: :func:`small_config`'s by default); a
    client with the admin token; a graceful stop after."""
    async with trio.open_nursery() as nursery:
        serving: Serving = await nursery.start(
            partial(serve, home, config or small_config(), host="127.0.0.1", port=0,
                    **options))
        async with httpx.AsyncClient(base_url=serving.url, timeout=60,
                                     headers=bearer(serving.admin_token)) as client:
            yield serving, client
        serving.stop()
