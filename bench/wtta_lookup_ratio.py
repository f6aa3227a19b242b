"""Lookup throughput with a 1,000,000-row cache against `/v1/health`, in the same server process and run.

One server process (one worker, CPU 0), wrk on CPU 1, 64 connections; `GET /v1/wtta/lookup?kvk=…` picks a random
number of the generated register on every request (so nearly every lookup is a different row), alternating with
`GET /v1/health`. Target: `ratio = rps(lookup) / rps(health) >= 0.8`.

    .venv/bin/python bench/wtta_lookup_ratio.py --database-url URL [--rows 1000000] [--duration 10] [--rounds 2]
        [--no-replica]

By default the server answers lookups from its in-memory copy of the register (`wtta/replica.py`): the script waits
until the copy is loaded (`compliance_wtta_replica_rows` on `/metrics`), prints how long that took and what it cost
in resident memory, and after the runs how many lookups were answered from memory and from the database.
`--no-replica` measures the database read on every lookup instead (`COMPLIANCE_WTTA_REPLICA=false`).

The database must already hold the register (e.g. the one `bench/wtta_import.py --keep DIR` leaves behind:
`sqlite:///DIR/sqlite/compliance.db`, or `postgresql://postgres@127.0.0.1:5432/compliance_bench_wtta`).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))

from harness import SECRET_KEY, WRK_REPORT, Server, create_token, measured, stop_all, wrk
from wtta_generate import FIRST_KVK

RANDOM_LOOKUP = """
math.randomseed(42)
request = function()
  local kvk = string.format("%08d", {first} + math.random(0, {rows} - 1) * 7)
  return wrk.format("GET", "/v1/wtta/lookup?kvk=" .. kvk)
end
"""


def metric(base_url: str, name: str, labels: str) -> float:
    """One sample of the server's `/metrics` (0 when absent)."""
    text = httpx.get(base_url + "/metrics", timeout=5).text
    found = re.search(rf"^{name}{{{labels}}} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def resident_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) / 1024 if found else 0.0


def load_replica(server: Server, token: str, rows: int) -> None:
    """Ask until the copy holds every row (a lookup that finds the copy absent starts loading it in the background)."""
    before, started = resident_mb(server.pid), time.monotonic()
    headers = {"Authorization": f"Bearer {token}"}
    while metric(server.base_url, "compliance_wtta_replica_rows", 'environment="live"') < rows:
        httpx.get(server.base_url + "/v1/wtta/lookup", params={"kvk": str(FIRST_KVK)}, headers=headers, timeout=30)
        if time.monotonic() - started > 600:
            raise SystemExit("the in-memory copy did not load within 600 s:\n" + server.log_tail())
        time.sleep(0.5)
    loaded_in = time.monotonic() - started
    after = resident_mb(server.pid)
    print(f"in-memory copy: {rows} rows loaded in {loaded_in:.1f} s; server RSS {before:.0f} MB -> {after:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-replica", action="store_true", help="read the database on every lookup")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="wtta-lookup-"))
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "COMPLIANCE_SECRET_KEY": SECRET_KEY,
        "COMPLIANCE_VAR_DIR": str(workdir),
        "COMPLIANCE_WTTA_REPLICA": "false" if args.no_replica else "true",
    }
    token = create_token(env, workdir, "internal")
    health_script = workdir / "health.lua"
    health_script.write_text(WRK_REPORT)
    lookup_script = workdir / "lookup.lua"
    lookup_script.write_text(RANDOM_LOOKUP.format(first=FIRST_KVK, rows=args.rows) + WRK_REPORT)
    server = Server("wtta", env, workdir, 0)
    try:
        server.start()
        if not args.no_replica:
            load_replica(server, token, args.rows)
        paths = {"health": ("/v1/health", health_script), "lookup": ("/v1/wtta/lookup", lookup_script)}
        rps: dict[str, list[float]] = {"health": [], "lookup": []}
        for round_no in range(args.rounds):
            for kind in ("health", "lookup") if round_no % 2 == 0 else ("lookup", "health"):
                path, script = paths[kind]
                wrk(server.base_url + path, args.warmup, cpu=1, connections=64, token=token, script=script)
                run = measured(
                    server, server.base_url + path, args.duration, cpu=1, connections=64, token=token, script=script
                )
                rps[kind].append(run.rps)
                print(
                    f"round {round_no + 1} {kind:6} rps={run.rps:8.1f} p50={run.p50_ms:6.2f} ms"
                    f" p99={run.p99_ms:7.2f} ms non2xx={run.non2xx} server cpu={run.server_cpu:4.0%}",
                    flush=True,
                )
        health, lookup = sum(rps["health"]) / args.rounds, sum(rps["lookup"]) / args.rounds
        print(f"health {health:.1f} rps, lookup {lookup:.1f} rps, ratio {lookup / health:.2f} (target >= 0.80)")
        if not args.no_replica:
            reads = {
                where: metric(server.base_url, "compliance_wtta_lookup_reads_total", f'read="{where}"')
                for where in ("memory", "database")
            }
            print(f"lookups answered from memory: {reads['memory']:.0f}, from the database: {reads['database']:.0f}")
    finally:
        server.stop()
        stop_all()


if __name__ == "__main__":
    main()
