"""Event vectors kept as float16: top-10 agreement with float32, bytes, and scoring time.

The runtime's :class:`~solace.memory.event_vectors.EventVectorStore` keeps each
event's raw-text embedding as float16 and scores a query in float32 (issue 12 §2:
"float16 ... embeddings ... with recall@10 against float32 reported"). This measures,
against the float32 storage it replaced:

* agreement: the events of LoCoMo conversations (``"Speaker: text"``, as ingest
  embeds them) embedded with the runtime's default embedder (``ModelsConfig()``), and
  ``--questions`` LoCoMo questions (spread evenly over the conversations) ranked
  against them two ways: float32 rows (the old store) and the float16 store. For each
  question, the overlap of the two top-10 id sets (/10), whether the lists are equal
  in order, and the largest score difference; done per conversation (a question
  against its own conversation's events) and pooled (against every conversation's
  events at once). Recall@10 of the gold evidence turns is reported for both, as a
  check that the ranking's quality did not move;
* bytes per event: the store's blocks divided by its rows at ``--rows`` rows (block
  slack included), and a sealed segment file's size per event, float32 vs float16;
* time: :meth:`EventVectorStore.similarities` over ``--rows`` rows (the LoCoMo vectors
  repeated) vs the old float32 loop (each 4,096-row block's ``rows @ query``), and vs
  float32 scored in the float16 loop's CHUNK_ROWS chunks (what widening alone costs:
  OpenBLAS threads a 4,096-row product over both cores and a 512-row one not, which
  on a loaded machine changes the old loop's time more than the dtype does); the best
  and the median of ``--repeats`` distinct queries each, the three interleaved.

The numbers are only as quiet as the machine (its load average is recorded). The
LoCoMo data is read from ``../shared/data/locomo/locomo10.json`` and never copied; if
it is absent the script says so and exits 0.

Usage::

    python benchmarks/vector_precision.py [DATA] [--conversations 10] [--questions 200]
        [--rows 100000] [--repeats 20] [--out FILE]

Results: ``benchmarks/results/vector_precision.json`` (BLAS threads as numpy chose:
two) and ``vector_precision_1thread.json`` (``OPENBLAS_NUM_THREADS=1``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import msgpack  # noqa: E402

from solace.config.schema import ModelsConfig  # noqa: E402
from solace.locomo import Conversation, load_locomo  # noqa: E402
from solace.memory.event_vector_files import PURPOSE, EventVectorFiles, segment_role  # noqa: E402
from solace.memory.event_vectors import BLOCK_ROWS, CHUNK_ROWS, EventVectorStore  # noqa: E402
from solace.memory.ladder.sentences import format_raw  # noqa: E402
from solace.models.factory import build_embedder  # noqa: E402
from solace.sealed import write_sealed  # noqa: E402
from substrate import KeyRing  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "vector_precision.json"
K = 10


def float32_similarities(blocks: list[np.ndarray], size: int, query: np.ndarray) -> np.ndarray:
    """The old store's scoring: float32 blocks of BLOCK_ROWS rows, ``rows @ query``."""
    sims = np.empty(size, dtype=np.float32)
    for i, block in enumerate(blocks):
        start = i * BLOCK_ROWS
        used = min(BLOCK_ROWS, size - start)
        sims[start:start + used] = block[:used] @ query
    return sims


def float32_chunked(blocks: list[np.ndarray], size: int, query: np.ndarray) -> np.ndarray:
    """float32 rows scored CHUNK_ROWS at a time, the float16 loop's shape without the
    widening: isolates what widening costs from what the chunk size does to BLAS."""
    sims = np.empty(size, dtype=np.float32)
    for start in range(0, size, CHUNK_ROWS):
        used = min(CHUNK_ROWS, size - start)
        offset = start % BLOCK_ROWS
        np.matmul(blocks[start // BLOCK_ROWS][offset:offset + used], query,
                  out=sims[start:start + used])
    return sims


def float32_blocks(matrix: np.ndarray) -> list[np.ndarray]:
    blocks = []
    for start in range(0, len(matrix), BLOCK_ROWS):
        block = np.zeros((BLOCK_ROWS, matrix.shape[1]), dtype=np.float32)
        part = matrix[start:start + BLOCK_ROWS]
        block[:len(part)] = part
        blocks.append(block)
    return blocks


def top(sims: np.ndarray, k: int = K) -> np.ndarray:
    """Row indices of the ``k`` best scores, best first (ties: lower row first)."""
    k = min(k, len(sims))
    part = np.argpartition(-sims, k - 1)[:k] if len(sims) > k else np.arange(len(sims))
    return part[np.lexsort((part, -sims[part]))]


def pick_questions(conversations: list[Conversation], n: int) -> list[tuple[int, int]]:
    """(conversation, question) pairs: ``n`` spread evenly over the conversations."""
    per = [len(c.questions) for c in conversations]
    out: list[tuple[int, int]] = []
    share = [n // len(conversations) + (1 if i < n % len(conversations) else 0)
             for i in range(len(conversations))]
    for ci, (want, have) in enumerate(zip(share, per, strict=True)):
        if have == 0 or want == 0:
            continue
        step = have / min(want, have)
        out += [(ci, int(j * step)) for j in range(min(want, have))]
    return out


def agreement(rows32: np.ndarray, ids: np.ndarray, queries: np.ndarray,
              evidence: list[set[int]]) -> dict[str, Any]:
    """Top-10 of float32 rows vs the float16 store over the same events and queries."""
    store = EventVectorStore()
    store.add_new(ids, rows32)
    rows = store.rows_of(ids)
    assert (rows == np.arange(len(ids))).all()
    blocks = float32_blocks(rows32)
    overlaps, same_order, max_diff = [], 0, 0.0
    recall32, recall16 = [], []
    for q, gold in zip(queries, evidence, strict=True):
        s32 = float32_similarities(blocks, len(ids), q)
        s16 = store.similarities(q)
        t32, t16 = top(s32), top(s16)
        overlaps.append(len(set(t32.tolist()) & set(t16.tolist())) / len(t32))
        same_order += bool(np.array_equal(t32, t16))
        max_diff = max(max_diff, float(np.abs(s32 - s16).max()))
        if gold:
            recall32.append(len(gold & set(ids[t32].tolist())) / len(gold))
            recall16.append(len(gold & set(ids[t16].tolist())) / len(gold))
    return {
        "events": len(ids), "questions": len(queries),
        "top10_overlap_mean": float(np.mean(overlaps)),
        "top10_overlap_min": float(np.min(overlaps)),
        "top10_identical_sets": int(sum(o == 1.0 for o in overlaps)),
        "top10_identical_order": same_order,
        "max_abs_score_diff": max_diff,
        "evidence_questions": len(recall32),
        "evidence_recall10_float32": float(np.mean(recall32)) if recall32 else None,
        "evidence_recall10_float16": float(np.mean(recall16)) if recall16 else None,
    }


def timing(base: np.ndarray, queries: np.ndarray, rows: int, repeats: int
           ) -> dict[str, Any]:
    """similarities() at ``rows`` rows: the float16 store vs the old float32 loop."""
    reps = -(-rows // len(base))
    matrix = np.ascontiguousarray(np.tile(base, (reps, 1))[:rows])
    store = EventVectorStore()
    store.add_new(np.arange(rows, dtype=np.int64), matrix)
    blocks = float32_blocks(matrix)
    qs = [queries[i % len(queries)] * np.float32(1 + i * 1e-3) for i in range(repeats + 1)]
    t16, t32, t32c = [], [], []
    float32_similarities(blocks, rows, qs[-1])
    float32_chunked(blocks, rows, qs[-1])
    store.similarities(qs[-1])
    for q in qs[:repeats]:  # interleaved, so all see the same load
        t0 = time.perf_counter()
        float32_similarities(blocks, rows, q)
        t32.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        float32_chunked(blocks, rows, q)
        t32c.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        store.similarities(q)  # a new vector each time: never the remembered one
        t16.append(time.perf_counter() - t0)
    ms = {name: {"best_ms": 1e3 * min(t), "median_ms": 1e3 * statistics.median(t)}
          for name, t in (("float32", t32), ("float32_chunked", t32c), ("float16", t16))}
    return {
        "rows": rows, "repeats": repeats, "chunk_rows": CHUNK_ROWS, **ms,
        "ratio_best": ms["float16"]["best_ms"] / ms["float32"]["best_ms"],
        "ratio_median": ms["float16"]["median_ms"] / ms["float32"]["median_ms"],
        "ratio_to_chunked_best": ms["float16"]["best_ms"] / ms["float32_chunked"]["best_ms"],
        "ratio_to_chunked_median": (ms["float16"]["median_ms"]
                                    / ms["float32_chunked"]["median_ms"]),
        "store_bytes_per_event_float16": sum(b.rows.nbytes for b in store._blocks) / rows,
        "store_bytes_per_event_float32": sum(b.nbytes for b in blocks) / rows,
        "id_map_bytes_per_event": store._row_of.nbytes / rows,
    }


def segment_bytes(matrix: np.ndarray, embedder: str) -> dict[str, float]:
    """A sealed segment's size per event, float16 (format 2) vs float32 (format 1)."""
    ring = KeyRing.generate()
    ids = np.arange(len(matrix), dtype=np.int64)
    with tempfile.TemporaryDirectory() as tmp:
        files, store = EventVectorFiles.load(Path(tmp) / "f16", ring=ring, embedder=embedder,
                                             dim=matrix.shape[1])
        store.add_new(ids, matrix)
        files.save(store, ring=ring)
        f16 = sum(p.stat().st_size for p in files.segments)
        name = "segment-format1.sealed"
        meta = {"version": 1, "embedder": embedder, "dim": matrix.shape[1],
                "ids": ids.tobytes(), "vectors": matrix.astype(np.float32).tobytes()}
        path = write_sealed(Path(tmp) / name, msgpack.packb(meta, use_bin_type=True),
                            ring=ring, purpose=PURPOSE, role=segment_role(name),
                            what="format-1 sizing")
        f32 = path.stat().st_size
    return {"events": len(matrix), "float32": f32 / len(matrix), "float16": f16 / len(matrix)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    args = ap.parse_args()
    if not Path(args.data).is_file():
        print(f"vector_precision: skipped: no LoCoMo data at {args.data}")
        return 0
    conversations = load_locomo(args.data, limit=args.conversations)
    embedder = build_embedder(ModelsConfig())
    t0 = time.perf_counter()
    texts, owner, dia = [], [], []
    for ci, c in enumerate(conversations):
        for t in c.turns:
            texts.append(format_raw(t.speaker, t.text))
            owner.append(ci)
            dia.append(t.dia_id)
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    chosen = pick_questions(conversations, args.questions)
    queries = np.asarray(embedder.embed(
        [conversations[ci].questions[qi].question for ci, qi in chosen]), dtype=np.float32)
    embed_s = time.perf_counter() - t0
    owner_a = np.array(owner)
    ids = np.arange(len(texts), dtype=np.int64)
    row_of = {(owner[i], dia[i]): i for i in range(len(texts))}
    evidence = [{row_of[(ci, d)] for d in conversations[ci].questions[qi].evidence
                 if (ci, d) in row_of} for ci, qi in chosen]

    per_conv = []
    for ci in range(len(conversations)):
        mine = [j for j, (c, _) in enumerate(chosen) if c == ci]
        if not mine:
            continue
        sel = owner_a == ci
        per_conv.append(agreement(vectors[sel], ids[sel], queries[mine],
                                  [evidence[j] for j in mine]))
    n = sum(r["questions"] for r in per_conv)

    def weighted(key: str, rows: list[dict[str, Any]], by: str = "questions") -> float:
        return sum(r[key] * r[by] for r in rows) / max(1, sum(r[by] for r in rows))

    ev = [r for r in per_conv if r["evidence_questions"]]
    per_conversation = {
        "conversations": len(per_conv), "questions": n,
        "events_per_conversation_mean": float(np.mean([r["events"] for r in per_conv])),
        "top10_overlap_mean": weighted("top10_overlap_mean", per_conv),
        "top10_overlap_min": min(r["top10_overlap_min"] for r in per_conv),
        "top10_identical_sets": sum(r["top10_identical_sets"] for r in per_conv),
        "top10_identical_order": sum(r["top10_identical_order"] for r in per_conv),
        "max_abs_score_diff": max(r["max_abs_score_diff"] for r in per_conv),
        "evidence_questions": sum(r["evidence_questions"] for r in ev),
        "evidence_recall10_float32": weighted("evidence_recall10_float32", ev,
                                              "evidence_questions"),
        "evidence_recall10_float16": weighted("evidence_recall10_float16", ev,
                                              "evidence_questions"),
    }
    pooled = agreement(vectors, ids, queries, evidence)
    speed = timing(vectors, queries, args.rows, args.repeats)
    files = segment_bytes(vectors, embedder.name)
    result = {
        "embedder": embedder.name, "dim": int(vectors.shape[1]), "data": str(args.data),
        "embed_seconds": embed_s, "load_average": os.getloadavg(),
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "per_conversation": per_conversation, "pooled": pooled,
        "similarities": speed, "segment_bytes_per_event": files,
    }

    print(f"embedder {embedder.name} ({vectors.shape[1]}-d), {len(texts)} events of "
          f"{len(conversations)} conversations, {n} questions; load {os.getloadavg()[0]:.2f}")
    print(f"{'top-10, float16 vs float32':<34}{'per conversation':>18}{'pooled':>12}")
    pc = per_conversation
    for label, a, b in (
        ("events ranked", f"{pc['events_per_conversation_mean']:.0f} (mean)",
         f"{pooled['events']}"),
        ("mean overlap of top-10 ids", f"{pc['top10_overlap_mean']:.4f}",
         f"{pooled['top10_overlap_mean']:.4f}"),
        ("min overlap", f"{pc['top10_overlap_min']:.1f}", f"{pooled['top10_overlap_min']:.1f}"),
        ("identical top-10 sets", f"{pc['top10_identical_sets']}/{n}",
         f"{pooled['top10_identical_sets']}/{pooled['questions']}"),
        ("identical top-10 order", f"{pc['top10_identical_order']}/{n}",
         f"{pooled['top10_identical_order']}/{pooled['questions']}"),
        ("max |score difference|", f"{pc['max_abs_score_diff']:.2e}",
         f"{pooled['max_abs_score_diff']:.2e}"),
        ("evidence recall@10 float32", f"{pc['evidence_recall10_float32']:.4f}",
         f"{pooled['evidence_recall10_float32']:.4f}"),
        ("evidence recall@10 float16", f"{pc['evidence_recall10_float16']:.4f}",
         f"{pooled['evidence_recall10_float16']:.4f}"),
    ):
        print(f"{label:<34}{a:>18}{b:>12}")
    print(f"\n{'':<34}{'float32':>12}{'float16':>12}{'ratio':>8}")
    b32, b16 = speed["store_bytes_per_event_float32"], speed["store_bytes_per_event_float16"]
    print(f"{'store bytes/event (' + str(args.rows) + ' rows)':<34}"
          f"{b32:>12.0f}{b16:>12.0f}{b16 / b32:>8.2f}")
    print(f"{'segment file bytes/event':<34}{files['float32']:>12.0f}{files['float16']:>12.0f}"
          f"{files['float16'] / files['float32']:>8.2f}")
    for stat in ("best_ms", "median_ms"):
        print(f"{'similarities() ' + stat.replace('_', ' '):<34}"
              f"{speed['float32'][stat]:>12.1f}{speed['float16'][stat]:>12.1f}"
              f"{speed['ratio_' + stat.removesuffix('_ms')]:>8.2f}")
    for stat in ("best_ms", "median_ms"):
        print(f"{'  float32 in ' + str(CHUNK_ROWS) + '-row chunks, ' + stat.replace('_', ' '):<34}"
              f"{speed['float32_chunked'][stat]:>12.1f}{speed['float16'][stat]:>12.1f}"
              f"{speed['ratio_to_chunked_' + stat.removesuffix('_ms')]:>8.2f}")
    print(f"(+ {speed['id_map_bytes_per_event']:.0f} B/event id map either way)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
