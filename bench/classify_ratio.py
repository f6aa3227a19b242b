"""What the Dutch classify endpoint costs: `POST /v1/classify/zelfstandigenwet` (scoring + audit write) against
`GET /v1/health` (bare: the same authenticated, rate-limited gateway, no work behind it).

For each backend, one server process with ONE worker pinned to CPU 0, `wrk` pinned to CPU 1 (the machinery of
`harness.py`):

* embedded: SQLite in a temporary directory, no REDIS_URL (in-process limiter); target ratio >= 0.6
* postgres: PostgreSQL (database `compliance_bench_classify`, created and migrated if missing) and Redis db 13;
  target >= 0.6

`ratio = rps(classify) / rps(/v1/health)`, both measured in the same server process, in alternating order, each
after a short warm-up, with an `internal`-plan token (never rate limited) and the access log on. Every classify
call inserts one row into `classification` and commits; after the load the script checks that the bench user's
rows equal the 200 answers the server logged for the route (and that wrk saw no non-2xx).

    .venv/bin/python bench/classify_ratio.py [--only embedded|postgres] [--duration 10] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import harness
from harness import Run, mean_rps, worst_p99

PG_DATABASE = os.environ.get("BENCH_CLASSIFY_PG_DATABASE", "compliance_bench_classify")
PG_URL = f"postgresql://postgres@127.0.0.1:5432/{PG_DATABASE}"
REDIS_URL = os.environ.get("BENCH_CLASSIFY_REDIS_URL", "redis://127.0.0.1:6379/13")
TARGET = 0.6
ROUTE = "/v1/classify/zelfstandigenwet"
BARE = "/v1/health"
BODY = {
    "engagement": {
        "hourly_rate_eur": 95,
        "months_duration": 12,
        "days_per_week": 5,
        "other_clients_count": 0,
        "own_tools": True,
        "own_liability": True,
        "sets_own_hours": False,
        "can_delegate": False,
        "profit_risk": False,
    }
}


def post_script() -> str:
    """wrk Lua: POST the JSON body on every request, plus the shared BENCH_JSON report."""
    body = json.dumps(BODY, separators=(",", ":"))
    return (
        'wrk.method = "POST"\n'
        f"wrk.body = {json.dumps(body)}\n"  # a JSON string literal is a valid Lua string literal here (ASCII)
        'wrk.headers["Content-Type"] = "application/json"\n' + harness.WRK_REPORT
    )


# --------------------------------------------------------------------------------------------- backends


def backend_env(name: str, workdir: Path) -> dict[str, str]:
    env = harness.base_env(workdir)  # SQLite under workdir/var, no Redis
    if name == "postgres":
        # As in production (docs/operate/deploy.md): the webhook worker is its own process, not a task of the API
        # server.
        env.update(DATABASE_URL=PG_URL, REDIS_URL=REDIS_URL, COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER="false")
    return env


def count_rows(name: str, workdir: Path, email: str) -> int:
    """Audit rows belonging to the bench user, read with the database's own client (not through the app)."""
    sql = (
        "SELECT count(*) FROM classification c JOIN user_account u ON u.id = c.user_id "
        f"WHERE u.email = '{email}' AND c.kind = 'zelfstandigenwet'"
    )
    if name == "postgres":
        argv = ["psql", PG_URL, "-tAc", sql]
    else:
        argv = ["sqlite3", str(workdir / "var" / "compliance.db"), sql]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr}")
    return int(done.stdout.strip())


@dataclass
class Result:
    name: str
    classify: list[Run]
    bare: list[Run]
    rows: int
    logged: dict[int, int]  # access-log status counts for the classify route (warm-ups included)
    wrk_ok: int  # 2xx answers wrk counted for classify (warm-ups included; excludes requests cut off at the end)

    @property
    def ratio(self) -> float:
        return mean_rps(self.classify) / mean_rps(self.bare)

    @property
    def round_ratios(self) -> list[float]:
        return [c.rps / b.rps for c, b in zip(self.classify, self.bare, strict=True)]

    @property
    def meets_target(self) -> bool:
        return self.ratio >= TARGET

    @property
    def rows_ok(self) -> bool:
        # Non-200 lines for the route (a request cut off when wrk stops) wrote no row and are reported, not failed.
        return self.rows == self.logged.get(200, 0) and self.wrk_ok <= self.rows


def bench_backend(name: str, args: argparse.Namespace) -> Result:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-classify-{name}-"))
    server = None
    try:
        env = backend_env(name, workdir)
        if name == "postgres":
            asyncio.run(harness.ensure_pg_database(PG_DATABASE))
        harness.cli(env, workdir, "migrate")
        email = f"bench-classify-{uuid.uuid4().hex[:12]}@example.com"
        harness.cli(env, workdir, "users", "create", email, "--plan", "internal")
        token = harness.cli(env, workdir, "tokens", "create", email).splitlines()[-1].strip()
        scripts = {"classify": workdir / "classify.lua", "bare": workdir / "report.lua"}
        scripts["classify"].write_text(post_script())
        scripts["bare"].write_text(harness.WRK_REPORT)
        server = harness.Server(name, env, workdir, args.server_cpu)
        server.start()
        assert server.log_path is not None
        print(
            f"[{name}] server pid {server.pid} on port {server.port} (CPU {args.server_cpu}), files in {workdir}",
            flush=True,
        )
        rows_before = count_rows(name, workdir, email)

        def measure(kind: str, seconds: float) -> Run:
            path = ROUTE if kind == "classify" else BARE
            return harness.measured(
                server,
                server.base_url + path,
                seconds,
                cpu=args.client_cpu,
                connections=args.connections,
                token=token,
                script=scripts[kind],
            )

        runs: dict[str, list[Run]] = {"classify": [], "bare": []}
        wrk_ok = 0
        for round_no in range(args.rounds):
            for kind in ("classify", "bare") if round_no % 2 == 0 else ("bare", "classify"):
                if args.warmup > 0:
                    warm = measure(kind, args.warmup)
                    if kind == "classify":
                        wrk_ok += warm.requests - warm.non2xx
                run = measure(kind, args.duration)
                runs[kind].append(run)
                if kind == "classify":
                    wrk_ok += run.requests - run.non2xx
                print(f"[{name}] round {round_no + 1} {kind:8} {run.figures()}", flush=True)
        server.stop()  # SIGTERM: uvicorn finishes the requests in flight (and their commits) first
        rows = count_rows(name, workdir, email) - rows_before
        logged = harness.logged_statuses(server.log_path, ROUTE)
        result = Result(name, runs["classify"], runs["bare"], rows, logged, wrk_ok)
        print(
            f"[{name}] audit rows {rows}, classify 200s in the access log {logged.get(200, 0)} "
            f"(other statuses {({s: n for s, n in logged.items() if s != 200}) or 'none'}), 2xx counted by wrk "
            f"{wrk_ok}: {'ok' if result.rows_ok else 'MISMATCH'}",
            flush=True,
        )
        return result
    finally:
        if server is not None:
            server.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


# --------------------------------------------------------------------------------------------- report


def summary_lines(results: list[Result]) -> list[str]:
    lines = []
    for r in results:
        c, b = r.classify, r.bare
        lines.append(
            f"{r.name:8}  classify rps={mean_rps(c):7.1f} p50={_p50(c):6.2f} p99={worst_p99(c):7.2f} ms  "
            f"health rps={mean_rps(b):7.1f} p50={_p50(b):6.2f} p99={worst_p99(b):7.2f} ms  "
            f"ratio={r.ratio:.2f} (target >= {TARGET}: {'met' if r.meets_target else 'NOT MET'}; "
            f"per round {', '.join(f'{x:.2f}' for x in r.round_ratios)})"
        )
        lines.append(
            f"{r.name:8}  audit rows {r.rows} = access-log 200s {r.logged.get(200, 0)}: "
            f"{'ok' if r.rows_ok else 'MISMATCH'} (wrk counted {r.wrk_ok} 2xx; it does not count requests still in "
            "flight when a run stops)"
        )
        if any(run.non2xx or run.socket_errors for run in c + b):
            lines.append(f"{r.name:8}  WARNING: non-2xx answers or socket errors during the load runs (see above)")
        if min(run.server_cpu for run in c + b) < 0.9:
            lines.append(f"{r.name:8}  WARNING: the server got less than 90% of its CPU in some run")
    return lines


def _p50(runs: list[Run]) -> float:
    return sum(r.p50_ms for r in runs) / len(runs)


def markdown(results: list[Result], args: argparse.Namespace, info: dict[str, str], command: str) -> str:
    out = [
        *harness.preamble(args, info, command, "rps and p50 are the mean of the rounds, p99 the worst"),
        "",
        "| backend | classify rps | classify p50 | classify p99 | /v1/health rps | /v1/health p50 | /v1/health p99 "
        "| ratio | per round | target | audit rows = 200s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for r in results:
        c, b = r.classify, r.bare
        out.append(
            f"| {r.name} | {mean_rps(c):.0f} | {_p50(c):.2f} ms | {worst_p99(c):.2f} ms | "
            f"{mean_rps(b):.0f} | {_p50(b):.2f} ms | {worst_p99(b):.2f} ms | {r.ratio:.2f} | "
            f"{', '.join(f'{x:.2f}' for x in r.round_ratios)} | >= {TARGET} "
            f"{'met' if r.meets_target else '**not met**'} | {r.rows} = {r.logged.get(200, 0)} "
            f"{'yes' if r.rows_ok else '**no**'} |"
        )
    out += [
        "",
        "Per run (server cpu: CPU seconds the server used per second; 100% = it had CPU 0 to itself and was busy):",
        "",
    ]
    labelled = [(r.name, ((f"POST {ROUTE}", r.classify), (f"GET {BARE}", r.bare))) for r in results]
    out += harness.table(
        harness.RUN_HEADER, harness.RUN_ALIGN, [row for name, runs in labelled for row in harness.run_rows(name, runs)]
    )
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["embedded", "postgres"], help="Run one backend only.")
    parser.add_argument("--duration", type=int, default=10, help="Seconds per measurement (default 10).")
    parser.add_argument("--warmup", type=float, default=2, help="Warm-up seconds before each measurement (2).")
    parser.add_argument("--rounds", type=int, default=2, help="Rounds per backend, order alternating (2).")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections (64).")
    parser.add_argument("--server-cpu", type=int, default=0, help="CPU for the server (0).")
    parser.add_argument("--client-cpu", type=int, default=1, help="CPU for wrk (1).")
    parser.add_argument("--markdown", type=Path, help="Also write the results as Markdown to this file.")
    parser.add_argument("--strict", action="store_true", help="Exit 1 when a target or the row check fails.")
    parser.add_argument("--keep", action="store_true", help="Keep the temporary directories (server logs, SQLite).")
    args = parser.parse_args()

    tools = ["wrk", "taskset", "sqlite3"] + (["psql"] if args.only != "embedded" else [])
    missing = harness.preflight(args, tools, "wrk util-linux sqlite3 postgresql-client")
    if missing is not None:
        return missing

    harness.stop_on_signals()
    loadavg = harness.load_average()
    print(f"load average {loadavg} (other work on these CPUs skews the figures)", flush=True)
    started = time.monotonic()
    results: list[Result] = []
    try:
        for name in ("embedded", "postgres"):
            if args.only in (None, name):
                results.append(bench_backend(name, args))
    finally:
        harness.stop_all()

    print()
    for line in summary_lines(results):
        print(line)
    print(f"(took {time.monotonic() - started:.0f} s)")
    if args.markdown:
        command = " ".join([".venv/bin/python", "bench/classify_ratio.py", *sys.argv[1:]])
        args.markdown.write_text(markdown(results, args, harness.machine(loadavg), command))
        print(f"wrote {args.markdown}")
    failed = any(not r.meets_target or not r.rows_ok for r in results)
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
