"""Event vectors kept as int8 (a scale a row): top-10 agreement with float32, bytes, time.

The runtime's :class:`~solace.memory.event_vectors.EventVectorStore` keeps each
event's raw-text embedding as int8 codes with one float32 scale a row and scores a
query in float32 (issue 12 §2: "float16 or product-quantised embeddings ... with
recall@10 against float32 reported"). This measures, against float32 rows and against
the float16 rows the store kept before:

* agreement: the events of LoCoMo conversations (``"Speaker: text"``, as ingest
  embeds them) embedded with the runtime's default embedder (``ModelsConfig()``), and
  ``--questions`` LoCoMo questions (spread evenly over the conversations) ranked
  against them as float32 rows, float16 rows and the int8 store. For each question,
  the overlap of each top-10 id set with float32's (/10), whether the lists are equal
  in order, and the largest score difference; done per conversation (a question
  against its own conversation's events) and pooled (against every conversation's
  events at once). Evidence recall@10 of the gold turns is reported for all three;
* bytes per event: the store's blocks divided by its rows at ``--rows`` rows (block
  slack included), and a sealed segment file's size per event, int8 (format 3) vs
  float32 (format 1);
* time: :meth:`EventVectorStore.similarities` over ``--rows`` rows (the LoCoMo vectors
  repeated) vs float32 blocks' ``rows @ query``; the best and the median of
  ``--repeats`` distinct queries each, interleaved.

The numbers are only as quiet as the machine (its load average is recorded). The
LoCoMo data is read from ``../shared/data/locomo/locomo10.json`` and never copied; if
it is absent the script says so and exits 0.

Usage::

    python benchmarks/vector_precision.py [DATA] [--conversations 10] [--questions 200]
        [--rows 100000] [--repeats 20] [--out FILE]

Results: ``benchmarks/results/vector_precision.json``.
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
from solace.memory.event_vectors import BLOCK_ROWS, EventVectorStore  # noqa: E402
from solace.memory.ladder.sentences import format_raw  # noqa: E402
from solace.models.factory import build_embedder  # noqa: E402
from solace.sealed import write_sealed  # noqa: E402
from substrate import KeyRing  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "vector_precision.json"
K = 10
#: The forms compared with float32 rows.
FORMS = ("float16", "int8")


def float32_similarities(blocks: list[np.ndarray], size: int, query: np.ndarray) -> np.ndarray:
    """float32 blocks of BLOCK_ROWS rows, ``rows @ query``."""
    sims = np.empty(size, dtype=np.float32)
    for i, block in enumerate(blocks):
        start = i * BLOCK_ROWS
        used = min(BLOCK_ROWS, size - start)
        sims[start:start + used] = block[:used] @ query
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
    """Top-10 of float32 rows vs float16 rows and the int8 store, same events and queries."""
    store = EventVectorStore()
    store.add_new(ids, rows32)
    assert (store.rows_of(ids) == np.arange(len(ids))).all()
    half = rows32.astype(np.float16).astype(np.float32)
    score = {"float16": lambda q: half @ q, "int8": store.similarities}
    overlaps: dict[str, list[float]] = {f: [] for f in FORMS}
    same_order = dict.fromkeys(FORMS, 0)
    max_diff = dict.fromkeys(FORMS, 0.0)
    recall: dict[str, list[float]] = {f: [] for f in ("float32", *FORMS)}
    for q, gold in zip(queries, evidence, strict=True):
        s32 = rows32 @ q
        t32 = top(s32)
        if gold:
            recall["float32"].append(len(gold & set(ids[t32].tolist())) / len(gold))
        for form in FORMS:
            sims = score[form](q)
            got = top(sims)
            overlaps[form].append(len(set(t32.tolist()) & set(got.tolist())) / len(t32))
            same_order[form] += bool(np.array_equal(t32, got))
            max_diff[form] = max(max_diff[form], float(np.abs(s32 - sims).max()))
            if gold:
                recall[form].append(len(gold & set(ids[got].tolist())) / len(gold))
    out: dict[str, Any] = {"events": len(ids), "questions": len(queries),
                           "evidence_questions": len(recall["float32"])}
    for form in FORMS:
        out[form] = {
            "top10_overlap_mean": float(np.mean(overlaps[form])),
            "top10_overlap_min": float(np.min(overlaps[form])),
            "top10_identical_sets": int(sum(o == 1.0 for o in overlaps[form])),
            "top10_identical_order": same_order[form],
            "max_abs_score_diff": max_diff[form],
        }
    out["evidence_recall10"] = {f: float(np.mean(r)) if r else None for f, r in recall.items()}
    return out


def timing(base: np.ndarray, queries: np.ndarray, rows: int, repeats: int
           ) -> dict[str, Any]:
    """similarities() at ``rows`` rows: the int8 store vs float32 blocks."""
    reps = -(-rows // len(base))
    matrix = np.ascontiguousarray(np.tile(base, (reps, 1))[:rows])
    store = EventVectorStore()
    store.add_new(np.arange(rows, dtype=np.int64), matrix)
    blocks = float32_blocks(matrix)
    qs = [queries[i % len(queries)] * np.float32(1 + i * 1e-3) for i in range(repeats + 1)]
    t8, t32 = [], []
    float32_similarities(blocks, rows, qs[-1])
    store.similarities(qs[-1])
    for q in qs[:repeats]:  # interleaved, so both see the same load
        t0 = time.perf_counter()
        float32_similarities(blocks, rows, q)
        t32.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        store.similarities(q)  # a new vector each time: never the remembered one
        t8.append(time.perf_counter() - t0)
    ms = {name: {"best_ms": 1e3 * min(t), "median_ms": 1e3 * statistics.median(t)}
          for name, t in (("float32", t32), ("int8", t8))}
    return {
        "rows": rows, "repeats": repeats, **ms,
        "ratio_best": ms["int8"]["best_ms"] / ms["float32"]["best_ms"],
        "ratio_median": ms["int8"]["median_ms"] / ms["float32"]["median_ms"],
        "store_bytes_per_event_int8": sum(b.codes.nbytes + b.scales.nbytes
                                          for b in store._blocks) / rows,
        "store_bytes_per_event_float16": sum(b.nbytes // 2 for b in blocks) / rows,
        "store_bytes_per_event_float32": sum(b.nbytes for b in blocks) / rows,
        "id_map_bytes_per_event": store._row_of.nbytes / rows,
    }


def segment_bytes(matrix: np.ndarray, embedder: str) -> dict[str, float]:
    """A sealed segment's size per event, int8 (format 3) vs float32 (format 1)."""
    ring = KeyRing.generate()
    ids = np.arange(len(matrix), dtype=np.int64)
    with tempfile.TemporaryDirectory() as tmp:
        files, store = EventVectorFiles.load(Path(tmp) / "int8", ring=ring, embedder=embedder,
                                             dim=matrix.shape[1])
        store.add_new(ids, matrix)
        files.save(store, ring=ring)
        int8 = sum(p.stat().st_size for p in files.segments)
        name = "segment-format1.sealed"
        meta = {"version": 1, "embedder": embedder, "dim": matrix.shape[1],
                "ids": ids.tobytes(), "vectors": matrix.astype(np.float32).tobytes()}
        path = write_sealed(Path(tmp) / name, msgpack.packb(meta, use_bin_type=True),
                            ring=ring, purpose=PURPOSE, role=segment_role(name),
                            what="format-1 sizing")
        f32 = path.stat().st_size
    return {"events": len(matrix), "float32": f32 / len(matrix), "int8": int8 / len(matrix)}


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
        if mine:
            sel = owner_a == ci
            per_conv.append(agreement(vectors[sel], ids[sel], queries[mine],
                                      [evidence[j] for j in mine]))
    n = sum(r["questions"] for r in per_conv)

    def weighted(get: Any, by: str) -> float:
        return sum(get(r) * r[by] for r in per_conv) / max(1, sum(r[by] for r in per_conv))

    per_conversation: dict[str, Any] = {
        "conversations": len(per_conv), "questions": n,
        "events_per_conversation_mean": float(np.mean([r["events"] for r in per_conv])),
        "evidence_questions": sum(r["evidence_questions"] for r in per_conv),
        "evidence_recall10": {f: weighted(lambda r, f=f: r["evidence_recall10"][f] or 0.0,
                                          "evidence_questions")
                              for f in ("float32", *FORMS)},
    }
    for form in FORMS:
        per_conversation[form] = {
            "top10_overlap_mean": weighted(lambda r, f=form: r[f]["top10_overlap_mean"],
                                           "questions"),
            "top10_overlap_min": min(r[form]["top10_overlap_min"] for r in per_conv),
            "top10_identical_sets": sum(r[form]["top10_identical_sets"] for r in per_conv),
            "top10_identical_order": sum(r[form]["top10_identical_order"] for r in per_conv),
            "max_abs_score_diff": max(r[form]["max_abs_score_diff"] for r in per_conv),
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
    pc = per_conversation
    print(f"{'top-10 against float32 rows':<30}{'per conversation':>24}{'pooled':>22}")
    print(f"{'':<30}{'float16':>12}{'int8':>12}{'float16':>11}{'int8':>11}")
    for label, key, fmt in (("mean overlap of top-10 ids", "top10_overlap_mean", ".4f"),
                            ("min overlap", "top10_overlap_min", ".1f"),
                            ("identical top-10 sets", "top10_identical_sets", "d"),
                            ("identical top-10 order", "top10_identical_order", "d"),
                            ("max |score difference|", "max_abs_score_diff", ".2e")):
        cells = [format(pc[f][key], fmt) for f in FORMS] + \
                [format(pooled[f][key], fmt) for f in FORMS]
        print(f"{label:<30}{cells[0]:>12}{cells[1]:>12}{cells[2]:>11}{cells[3]:>11}")
    print(f"(of {n} questions per conversation, {pooled['questions']} pooled)")
    print(f"\n{'evidence recall@10':<30}{'per conversation':>18}{'pooled':>12}")
    for form in ("float32", *FORMS):
        print(f"{'  ' + form:<30}{pc['evidence_recall10'][form]:>18.4f}"
              f"{pooled['evidence_recall10'][form]:>12.4f}")
    print(f"\n{'':<34}{'float32':>12}{'int8':>12}{'ratio':>8}")
    b32, b8 = speed["store_bytes_per_event_float32"], speed["store_bytes_per_event_int8"]
    print(f"{'store bytes/event (' + str(args.rows) + ' rows)':<34}"
          f"{b32:>12.0f}{b8:>12.0f}{b8 / b32:>8.2f}   (float16: "
          f"{speed['store_bytes_per_event_float16']:.0f})")
    print(f"{'segment file bytes/event':<34}{files['float32']:>12.0f}{files['int8']:>12.0f}"
          f"{files['int8'] / files['float32']:>8.2f}")
    for stat in ("best_ms", "median_ms"):
        print(f"{'similarities() ' + stat.replace('_', ' '):<34}"
              f"{speed['float32'][stat]:>12.1f}{speed['int8'][stat]:>12.1f}"
              f"{speed['ratio_' + stat.removesuffix('_ms')]:>8.2f}")
    print(f"(+ {speed['id_map_bytes_per_event']:.0f} B/event id map either way)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
