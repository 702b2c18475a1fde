"""The fact-memory benchmark's printed tables and growth plot (``facts_bench.py``).

Pure formatting of the result dict the benchmark writes as JSON; sections that were
not run are left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["plot_growth", "table"]


def table(res: dict[str, Any]) -> str:
    """The printed tables, one block per section."""
    lines = [f"machine: {res['machine']}; embedder {res['embedder']}"]
    ext = res.get("extractor", "not run")
    lines.append("\n1. Extractor (labelled LoCoMo turns; headline: test)")
    if ext == "not run":
        lines.append("  not run")
    elif ext is None:
        lines.append("  skipped: LoCoMo data absent")
    else:
        lines.append(f"  {'split':<8}{'turns':>6}{'gold':>6}{'extr':>6}{'P%':>7}{'R%':>7}"
                     f"{'F1':>7}{'p50 ms':>8}{'p95 ms':>8}")
        for split, r in ext.items():
            lines.append(f"  {split:<8}{r['turns']:>6}{r['gold']:>6}{r['extracted']:>6}"
                         f"{r['precision']:>7}{r['recall']:>7}{r['f1']:>7}"
                         f"{r['latency_ms']['p50']:>8}{r['latency_ms']['p95']:>8}")
    if "updates" in res:
        lines.extend(_updates(res["updates"]))
    if "growth" in res:
        lines.extend(_growth(res["growth"]))
    if "compaction" in res:
        lines.extend(_compaction(res["compaction"]))
    if "cost" in res:
        lines.extend(_cost(res["cost"]))
    return "\n".join(lines)


def _updates(up: dict[str, Any]) -> list[str]:
    lines = []
    lines.append("\n2. Knowledge updates (recall block; targets: newest >= 95 %, only-old 0 %)")
    if not up["real_data"]:
        lines.append("  real LoCoMo sequences skipped: data absent")
    lines.append(f"  {'group':<24}{'system':<13}{'n':>4}{'newest%':>9}{'only-old%':>10}"
                 f"{'stale%':>8}{'both%':>7}{'neither%':>9}  new write / nothing extracted")
    for g, r in up["groups"].items():
        for system in ("solace", "append_only"):
            s = r[system]
            extra = (f"  {r['new_write_class']} / {r['new_turn_extracted_nothing']}"
                     if system == "solace" else "")
            lines.append(f"  {g:<24}{system:<13}{s['n']:>4}{s['newest']:>9}{s['only_old']:>10}"
                         f"{s['stale_present']:>8}{s['both']:>7}{s['neither']:>9}{extra}")
    for name, what in (("remember_latency_ms", "remember (classification + write)"),
                       ("extract_turn_latency_ms", "extract_turn (extraction + classification "
                        "+ writes)")):
        if name in up:
            lat = up[name]
            lines.append(f"  {what}: p50 {lat['p50']} ms, p95 {lat['p95']} ms (n {lat['n']})")
    for g, subs in up.get("by_subject", {}).items():
        worst = sorted(subs.items(), key=lambda kv: (kv[1]["newest_only"], kv[0]))[:4]
        lines.append(f"  {g}: lowest newest-only by subject: " + ", ".join(
            f"{k} {v['newest_only']}%" for k, v in worst))
    return lines


def _growth(gr: dict[str, Any]) -> list[str]:
    lines = []
    lines.append(f"\n3. Growth ({gr['mentions']} mentions, {gr['points'][-1]['distinct']} "
                 f"distinct facts, {gr['distinct_phrasings']} distinct phrasings)")
    lines.append(f"  {'mentions':>9}{'distinct':>9}{'phrasings':>10}{'solace facts':>13}"
                 f"{'append facts':>13}{'solace tok':>11}{'append tok':>11}")
    pts = gr["points"]
    for p in [pts[max(0, round(len(pts) * q) - 1)] for q in (0.25, 0.5, 0.75, 1.0)]:
        lines.append(f"  {p['mentions']:>9}{p['distinct']:>9}{p['phrasings']:>10}"
                     f"{p['solace_facts']:>13}"
                     f"{p['append_only_facts']:>13}{p['solace_tokens']:>11}"
                     f"{p['append_only_tokens']:>11}")
    lines.append(f"  write classes (stream kind -> class): {gr['classes']}")
    fin = gr["final"]
    lines.append(f"  at the end: {fin['facts']} distinct facts; current value not stated by any "
                 f"live fact: {fin['current_value_missing']}; a stale value still live: "
                 f"{fin['stale_value_live']}; UPDATEs that superseded a different fact: "
                 f"{gr['wrong_supersessions']}")
    return lines


def _compaction(co: dict[str, Any]) -> list[str]:
    lines = ["\n4. Compaction (templated restatement corpus; target >= 2x smaller, 100 % of "
             "names/numbers/dates kept)"]
    splits = [co, co["tuning"]] if "tuning" in co else [co]
    lines.extend(_compaction_ratios(splits))
    lines.append(f"  {'split':<8} {'ids':>3} {'writes':>6} {'distinct':>8} {'facts':>9} "
                 f"{'tokens':>11} {'ratio':>5} {'floor':>5} {'kept':>6} "
                 f"{'recall (top_k, top 1)':>27}  verdicts")
    for sp in splits:
        facts = f"{sp['live_before']}->{sp['live_after']}"
        tokens = f"{sp['tokens_before']}->{sp['tokens_after']}"
        recall = (f"{sp['recall_before_pct']}->{sp['recall_after_pct']}"
                  f" top1 {sp['top1_before_pct']}->{sp['top1_after_pct']}"
                  if "top1_before_pct" in sp else "-")
        floor = f"{sp['floor_ratio']}x" if "floor_ratio" in sp else "-"
        lines.append(f"  {sp.get('split', 'test'):<8} {sp['ids']:>3} {sp['written']:>6} "
                     f"{sp.get('distinct', '-'):>8} {facts:>9} {tokens:>11} "
                     f"{str(sp['ratio']) + 'x':>5} {floor:>5} {sp['salient_kept_pct']:>5}% "
                     f"{recall:>27}  {sp['verdicts']}")
    for sp in splits:
        if "update_newest_pct" in sp:
            lines.append(f"  {sp.get('split', 'test')}: one later update per id: newest value "
                         f"recalled {sp['update_newest_pct']} %, old only "
                         f"{sp['update_old_only_pct']} %, the other facts' values still "
                         f"recalled {sp['update_others_kept_pct']} %")
    lines.append("  floor: the shortest live phrasing of each distinct fact (an oracle that "
                 "knows the restatements); recall: % of distinct facts whose value is in "
                 "recall(question)'s block, before->after")
    return lines


def _compaction_ratios(splits: list[dict[str, Any]]) -> list[str]:
    """Three ratios per split: the compactor handed the corpus as written (the target's
    measure), the system end to end, and the compactor after write-time classification."""
    lines = [f"  {'split':<8} {'what':<52} {'tokens':>11} {'ratio':>6} {'floor':>6} {'kept':>6}"]
    for sp in splits:
        name, alone = sp.get("split", "test"), sp.get("alone")
        if alone:
            lines.append(f"  {name:<8} {'compactor alone, corpus as written (target >= 2x)':<52} "
                         f"{alone['tokens_before']:>5}->{alone['tokens_after']:<5} "
                         f"{alone['ratio']:>5}x {alone['floor_ratio']:>5}x "
                         f"{alone['salient_kept_pct']:>5}%")
            lines.append(f"  {name:<8} {'written -> live after classification + consolidate':<52} "
                         f"{sp['tokens_written']:>5}->{sp['tokens_after']:<5} "
                         f"{sp['system_ratio']:>5}x {'':>6} {'':>6}")
        lines.append(f"  {name:<8} {'live after classification -> after consolidate':<52} "
                     f"{sp['tokens_before']:>5}->{sp['tokens_after']:<5} {sp['ratio']:>5}x "
                     f"{sp.get('floor_ratio', '-'):>5}x {sp['salient_kept_pct']:>5}%")
    return lines


def _cost(cost: dict[str, Any]) -> list[str]:
    lines = []
    lines.append("\n5. Cost (wall time around extract_turn: extraction + classification + write)")
    for name, c in cost.items():
        if "skipped" in c:
            lines.append(f"  {name:<22} skipped: {c['skipped']}")
            continue
        lines.append(f"  {name:<22} turns {c['turns']:>4}  LLM calls/turn "
                     f"{c['llm_calls_per_turn']:<6} facts/turn {c['facts_per_turn']:<6} "
                     f"p50 {c['latency_ms']['p50']} ms  p95 {c['latency_ms']['p95']} ms")
    return lines


def plot_growth(growth: dict[str, Any], path: Path) -> None:
    """Facts and tokens stored vs mentions, Solace and append-only (PNG, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = growth["points"]
    x = [p["mentions"] for p in pts]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    a.plot(x, [p["append_only_facts"] for p in pts], label="append-only")
    a.plot(x, [p["solace_facts"] for p in pts], label="Solace (live facts)")
    a.plot(x, [p["distinct"] for p in pts], "--", label="distinct current facts")
    a.plot(x, [p["phrasings"] for p in pts], ":", label="distinct phrasings seen")
    a.set(xlabel="mentions", ylabel="facts stored", yscale="log", title="Facts stored")
    b.plot(x, [p["append_only_tokens"] for p in pts], label="append-only")
    b.plot(x, [p["solace_tokens"] for p in pts], label="Solace (live facts)")
    b.set(xlabel="mentions", ylabel="tokens stored (WordPiece)", yscale="log",
          title="Tokens stored")
    for ax in (a, b):
        ax.legend()
        ax.grid(True, which="major", alpha=0.3)
        ax.minorticks_off()
    fig.suptitle("Fact memory growth over a stream of restatements")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
