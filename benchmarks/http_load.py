"""HTTP load: bounded concurrent clients doing recall and observe against ``solace serve``.

A home holding one LoCoMo conversation (imported with the default embedder, MiniLM int8: every
turn observed at its date under a :class:`solace.ReplayClock`, the fade settled at each
session's end) is served by ``python -m solace serve`` in a child process on loopback,
once per ASGI server (``--http-server``: Solace's own on h11, the default, then
hypercorn's trio worker, each on its own copy of the home, one after the other in the
same run, so the ratio between them holds however fast the machine is that day).
``--clients`` clients (httpx, one connection each) then loop for ``--seconds``: four
recalls (the conversation's questions, in turn, ``k=10``) for every observe (a new line
tagged with the client and its sequence number). Latency is measured in the client,
per request, from send to the end of the body.

Before the load, the same clients loop on ``GET /healthz`` for ``--floor-seconds``: the
floor, what the HTTP stack and the clients themselves cost on this machine (both share
its two cores). Recall's p50 is reported against it as a ratio too, since these
machines are shared and their speed varies from run to run.

Reported: p50/p95/p99 and throughput per operation, errors (any non-2xx or transport
failure; should be 0), and, after a clean stop (SIGTERM), the events in the substrate
that carry the benchmark's tag against those the server acknowledged (should be equal,
and every acknowledged entry id must hold its own line). Target: recall p50 <= 25 ms
with 10 clients, judged on the first server (the default).

The server runs with ``models.llm_backend = "none"``: neither recall nor observe calls
the LLM, and loading it would only take memory.

Usage::

    python benchmarks/http_load.py [DATA] [--clients 10] [--seconds 60]
        [--servers solace,hypercorn] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import numpy as np  # noqa: E402
import trio  # noqa: E402

from solace.clock import ReplayClock  # noqa: E402
from solace.config import load_config  # noqa: E402
from solace.locomo import load_locomo, replay  # noqa: E402
from solace.runtime import extra_kinds, open_runtime  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
TAG = "http_load"
RECALLS_PER_OBSERVE = 4
CONFIG_TOML = '[models]\nllm_backend = "none"\n'  # the default embedder
SERVERS = ("solace", "hypercorn")  # solace serve --http-server: the default, and hypercorn
TARGET_MS = 25.0


async def build_home(home: Path, data: Path, config_file: Path) -> tuple[int, list[str]]:
    """Import LoCoMo's first conversation into ``home``; (events, questions)."""
    (conversation,) = load_locomo(data, limit=1)
    async with open_runtime(home, load_config(config_file), clock=ReplayClock()) as rt:
        await replay(rt, conversation)
        await rt.settle()
        events = rt.substrate.last_id
    questions = [q.question for q in conversation.questions if q.question.strip()]
    return events, questions


def start_server(home: Path, config_file: Path, server: str
                 ) -> tuple[subprocess.Popen[bytes], str, str]:
    """``python -m solace serve --http-server SERVER`` on a free loopback port;
    (process, url, admin token)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "solace", "serve", "--home", str(home), "--port", "0",
         "--config", str(config_file), "--http-server", server],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if "serving on" not in line:
        proc.kill()
        raise SystemExit(f"solace serve did not start: {line!r} (see {home}/solace.log)")
    info = json.loads((home / "serve.json").read_text())
    return proc, info["url"], info["admin_token"]


class Tally:
    """Latencies (seconds) per operation, errors, and acknowledged observes."""

    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = {"recall": [], "observe": [], "healthz": []}
        self.errors: list[str] = []
        self.acked: dict[int, str] = {}


async def client(url: str, token: str, number: int, questions: list[str], deadline: float,
                 tally: Tally, floor: bool = False) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=1)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60,
                                 limits=limits) as http:
        step = 0
        while time.perf_counter() < deadline:
            body: dict[str, Any] | None = None
            if floor:
                op = "healthz"
            elif step % (RECALLS_PER_OBSERVE + 1) == RECALLS_PER_OBSERVE:
                op = "observe"
                text = f"load line {step} from client {number}: the garden needs water"
                body = {"text": text, "speaker": f"client{number}", "attrs": {"bench": TAG}}
            else:
                op = "recall"
                body = {"query": questions[(number * 31 + step) % len(questions)], "k": 10}
            start = time.perf_counter()
            try:
                r = await (http.get(f"/{op}") if body is None
                           else http.post(f"/{op}", json=body))
                elapsed = time.perf_counter() - start
                if r.status_code // 100 != 2:
                    tally.errors.append(f"{op} {r.status_code} {r.text[:200]}")
                else:
                    tally.latency[op].append(elapsed)
                    if op == "observe":
                        tally.acked[r.json()["entry_id"]] = text
            except httpx.HTTPError as exc:
                tally.errors.append(f"{op} {type(exc).__name__}: {exc}")
            step += 1


def check_substrate(home: Path, config_file: Path, acked: dict[int, str]) -> dict[str, Any]:
    """Events tagged by the benchmark in the substrate, against those acknowledged."""
    from substrate import KeySource, open_substrate

    config = load_config(config_file)
    sub = open_substrate(home / "substrate", key_source=KeySource(
        key_file=home / "substrate" / "substrate.key"), extra_kinds=extra_kinds(config),
        read_only=True)
    try:
        tagged = {e.entry_id: e.content for e in sub.scan(kind="message")
                  if e.attrs.get("bench") == TAG}
    finally:
        sub.close()
    return {"tagged_events": len(tagged), "acknowledged": len(acked),
            "equal": tagged == acked}


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50_ms": float("nan"), "p95_ms": float("nan"), "p99_ms": float("nan")}
    ms = np.asarray(values) * 1000
    return {f"p{q}_ms": round(float(np.percentile(ms, q)), 2) for q in (50, 95, 99)}


async def run_clients(url: str, token: str, clients: int, seconds: float,
                      questions: list[str], tally: Tally, *, floor: bool) -> float:
    """``clients`` clients for ``seconds``; the seconds they took."""
    start = time.perf_counter()
    deadline = start + seconds
    async with trio.open_nursery() as nursery:
        for n in range(clients):
            nursery.start_soon(client, url, token, n, questions, deadline, tally, floor)
    return time.perf_counter() - start


async def run_load(url: str, token: str, clients: int, seconds: float, floor_seconds: float,
                   questions: list[str]) -> tuple[Tally, float, float]:
    """The floor, then the load: (tally, floor seconds, load seconds)."""
    tally = Tally()
    async with httpx.AsyncClient(base_url=url) as warm:  # one recall warms the model
        await warm.post("/recall", json={"query": questions[0]},
                        headers={"Authorization": f"Bearer {token}"}, timeout=600)
    floor = await run_clients(url, token, clients, floor_seconds, questions, tally,
                              floor=True)
    load = await run_clients(url, token, clients, seconds, questions, tally, floor=False)
    return tally, floor, load


def measure(server: str, home: Path, config_file: Path, questions: list[str],
            args: argparse.Namespace) -> dict[str, Any]:
    """One server on ``home``: the floor, the load, a clean stop, the substrate check."""
    proc, url, token = start_server(home, config_file, server)
    try:
        tally, floor_s, elapsed = trio.run(run_load, url, token, args.clients,
                                           args.seconds, args.floor_seconds, questions)
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=120)
    check = check_substrate(home, config_file, tally.acked)
    rows = []
    for op, values in tally.latency.items():
        seconds = floor_s if op == "healthz" else elapsed
        rows.append({"operation": op, "requests": len(values),
                     "throughput_rps": round(len(values) / seconds, 1), **percentiles(values)})
    p50 = {row["operation"]: row["p50_ms"] for row in rows}
    return {
        "seconds": round(elapsed, 1), "floor_seconds": round(floor_s, 1), "rows": rows,
        "errors": len(tally.errors), "error_samples": tally.errors[:5],
        "substrate": check, "server_exit_code": code,
        "recall_p50_ms": p50["recall"], "floor_healthz_p50_ms": p50["healthz"],
        "recall_p50_over_floor": round(p50["recall"] / p50["healthz"], 2),
    }


def report(server: str, run: dict[str, Any]) -> None:
    print(f"\n--http-server {server}: {run['seconds']} s of load")
    print(f"{'operation':<10}{'requests':>10}{'req/s':>9}{'p50 ms':>9}{'p95 ms':>9}"
          f"{'p99 ms':>9}")
    for row in run["rows"]:
        print(f"{row['operation']:<10}{row['requests']:>10}{row['throughput_rps']:>9}"
              f"{row['p50_ms']:>9}{row['p95_ms']:>9}{row['p99_ms']:>9}")
    check = run["substrate"]
    print(f"errors: {run['errors']}; observes acknowledged {check['acknowledged']}, "
          f"tagged events in the substrate {check['tagged_events']} "
          f"(identical: {check['equal']}); server exit code {run['server_exit_code']}")
    print(f"recall p50 {run['recall_p50_ms']} ms, {run['recall_p50_over_floor']}x the floor "
          f"(GET /healthz under the same clients, {run['floor_seconds']:.0f} s before the "
          f"load: p50 {run['floor_healthz_p50_ms']} ms)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--floor-seconds", type=float, default=15.0)
    parser.add_argument("--servers", default=",".join(SERVERS),
                        help=f"comma-separated, of {', '.join(SERVERS)} (default: both; the "
                             "first is the one the target is judged on)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" /
                        "http_load.json")
    args = parser.parse_args()
    servers = [s for s in args.servers.split(",") if s]
    if not servers or any(s not in SERVERS for s in servers):
        parser.error(f"--servers takes a comma-separated list of {', '.join(SERVERS)}, "
                     f"got {args.servers!r}")
    if not args.data.exists():
        print(f"skipped: no LoCoMo data at {args.data}")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="solace-http-load-") as tmp:
        built, config_file = Path(tmp) / "built", Path(tmp) / "solace.toml"
        config_file.write_text(CONFIG_TOML)
        t0 = time.perf_counter()
        imported, questions = trio.run(build_home, built, args.data, config_file)
        import_s = time.perf_counter() - t0
        for server in servers:  # each on its own copy of the imported home
            home = Path(tmp) / server
            shutil.copytree(built, home)
            runs[server] = measure(server, home, config_file, questions, args)
    print(f"solace serve under load: {args.clients} clients, home of {imported} events "
          f"(LoCoMo conv 0, default embedder)")
    for server, run in runs.items():
        report(server, run)
    judged = runs[servers[0]]
    result: dict[str, Any] = {
        "clients": args.clients, "imported_events": imported,
        "import_seconds": round(import_s, 1), "servers": runs, "judged_server": servers[0],
        "recall_p50_target_ms": TARGET_MS,
        "recall_p50_met": judged["recall_p50_ms"] <= TARGET_MS,
    }
    if len(runs) > 1:
        first, *others = servers
        result["recall_p50_ratio_to_first"] = {
            s: round(runs[s]["recall_p50_ms"] / runs[first]["recall_p50_ms"], 2)
            for s in others}
        for s, ratio in result["recall_p50_ratio_to_first"].items():
            print(f"\nrecall p50 under {s} is {ratio}x that under {first} (same run)")
    print(f"recall p50 under {servers[0]}: {judged['recall_p50_ms']} ms (target <= "
          f"{TARGET_MS:g} ms: {'met' if result['recall_p50_met'] else 'NOT met'})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    clean = all(not r["errors"] and r["substrate"]["equal"] and r["server_exit_code"] == 0
                for r in runs.values())
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
