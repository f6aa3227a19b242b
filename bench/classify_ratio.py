"""What the Dutch classify endpoint costs: `POST /v1/classify/zelfstandigenwet` (scoring + audit write) against
`GET /v1/health` (bare: the same authenticated, rate-limited gateway, no work behind it).

For each backend, one server process with ONE worker pinned to CPU 0, `wrk` pinned to CPU 1 (the machinery of
`health_ratio.py`, imported):

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
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import health_ratio as hr

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
        'wrk.headers["Content-Type"] = "application/json"\n' + hr.WRK_REPORT
    )


# --------------------------------------------------------------------------------------------- backends


async def ensure_pg_database() -> None:
    import asyncpg  # type: ignore[import-untyped]  # only the postgres backend needs it

    conn = await asyncpg.connect(hr.PG_ADMIN_DSN)
    try:
        if not await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", PG_DATABASE):
            await conn.execute(f'CREATE DATABASE "{PG_DATABASE}"')
    finally:
        await conn.close()


def backend_env(name: str, workdir: Path) -> dict[str, str]:
    env = hr.backend_env("embedded", workdir)  # SQLite under workdir/var, no Redis
    if name == "postgres":
        # As in production (docs/deploy.md): the webhook worker is its own process, not a task of the API server.
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


def logged_statuses(log_path: Path, route: str) -> dict[int, int]:
    """Status counts the server's access log recorded for `route` (one JSON line per answered request)."""
    counts: dict[int, int] = {}
    with open(log_path, "rb") as handle:
        for line in handle:
            if route.encode() not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("event") == "request" and entry.get("route") == route:
                counts[entry["status"]] = counts.get(entry["status"], 0) + 1
    return counts


@dataclass
class Result:
    name: str
    classify: list[hr.Run]
    bare: list[hr.Run]
    rows: int
    logged: dict[int, int]  # access-log status counts for the classify route (warm-ups included)
    wrk_ok: int  # 2xx answers wrk counted for classify (warm-ups included; excludes requests cut off at the end)

    @property
    def ratio(self) -> float:
        return hr.Result._rps(self.classify) / hr.Result._rps(self.bare)

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
            asyncio.run(ensure_pg_database())
        hr.cli(env, workdir, "migrate")
        email = f"bench-classify-{uuid.uuid4().hex[:12]}@example.com"
        hr.cli(env, workdir, "users", "create", email, "--plan", "internal")
        token = hr.cli(env, workdir, "tokens", "create", email).splitlines()[-1].strip()
        scripts = {"classify": workdir / "classify.lua", "bare": workdir / "report.lua"}
        scripts["classify"].write_text(post_script())
        scripts["bare"].write_text(hr.WRK_REPORT)
        server = hr.Server(name, env, workdir, args.server_cpu)
        server.start()
        assert server.proc is not None
        assert server.log_path is not None
        pid = server.proc.pid
        print(
            f"[{name}] server pid {pid} on port {server.port} (CPU {args.server_cpu}), files in {workdir}", flush=True
        )
        rows_before = count_rows(name, workdir, email)

        def measure(kind: str, seconds: float) -> hr.Run:
            path = ROUTE if kind == "classify" else BARE
            return hr.wrk(
                server.base_url + path,
                seconds,
                cpu=args.client_cpu,
                connections=args.connections,
                token=token,
                script=scripts[kind],
            )

        runs: dict[str, list[hr.Run]] = {"classify": [], "bare": []}
        wrk_ok = 0
        for round_no in range(args.rounds):
            for kind in ("classify", "bare") if round_no % 2 == 0 else ("bare", "classify"):
                if args.warmup > 0:
                    warm = measure(kind, args.warmup)
                    if kind == "classify":
                        wrk_ok += warm.requests - warm.non2xx
                cpu_before, wall_before = hr.cpu_seconds(pid), time.monotonic()
                run = measure(kind, args.duration)
                run.server_cpu = (hr.cpu_seconds(pid) - cpu_before) / (time.monotonic() - wall_before)
                runs[kind].append(run)
                if kind == "classify":
                    wrk_ok += run.requests - run.non2xx
                flag = f"  NON-2XX={run.non2xx}" if run.non2xx else ""
                flag += f"  SOCKET-ERRORS={run.socket_errors}" if run.socket_errors else ""
                print(
                    f"[{name}] round {round_no + 1} {kind:8} rps={run.rps:8.1f}  p50={run.p50_ms:6.2f} ms"
                    f"  p99={run.p99_ms:8.2f} ms  max={run.max_ms:8.2f} ms  server cpu={run.server_cpu:4.0%}{flag}",
                    flush=True,
                )
        server.stop()  # SIGTERM: uvicorn finishes the requests in flight (and their commits) first
        rows = count_rows(name, workdir, email) - rows_before
        logged = logged_statuses(server.log_path, ROUTE)
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
            f"{r.name:8}  classify rps={hr.Result._rps(c):7.1f} p50={_p50(c):6.2f} p99={hr.Result._p99(c):7.2f} ms  "
            f"health rps={hr.Result._rps(b):7.1f} p50={_p50(b):6.2f} p99={hr.Result._p99(b):7.2f} ms  "
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


def _p50(runs: list[hr.Run]) -> float:
    return sum(r.p50_ms for r in runs) / len(runs)


def markdown(results: list[Result], args: argparse.Namespace, info: dict[str, str], command: str) -> str:
    out = [
        *hr.preamble(args, info, command, "rps and p50 are the mean of the rounds, p99 the worst"),
        "",
        "| backend | classify rps | classify p50 | classify p99 | /v1/health rps | /v1/health p50 | /v1/health p99 "
        "| ratio | per round | target | audit rows = 200s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for r in results:
        c, b = r.classify, r.bare
        out.append(
            f"| {r.name} | {hr.Result._rps(c):.0f} | {_p50(c):.2f} ms | {hr.Result._p99(c):.2f} ms | "
            f"{hr.Result._rps(b):.0f} | {_p50(b):.2f} ms | {hr.Result._p99(b):.2f} ms | {r.ratio:.2f} | "
            f"{', '.join(f'{x:.2f}' for x in r.round_ratios)} | >= {TARGET} "
            f"{'met' if r.meets_target else '**not met**'} | {r.rows} = {r.logged.get(200, 0)} "
            f"{'yes' if r.rows_ok else '**no**'} |"
        )
    out += [
        "",
        "Per run (server cpu: CPU seconds the server used per second; 100% = it had CPU 0 to itself and was busy):",
        "",
        "| backend | round | endpoint | rps | p50 | p99 | max | non-2xx | server cpu |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        for kind, runs in ((f"POST {ROUTE}", r.classify), (f"GET {BARE}", r.bare)):
            for i, run in enumerate(runs):
                out.append(
                    f"| {r.name} | {i + 1} | {kind} | {run.rps:.0f} | {run.p50_ms:.2f} ms | {run.p99_ms:.2f} ms | "
                    f"{run.max_ms:.2f} ms | {run.non2xx} | {run.server_cpu:.0%} |"
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
    for tool in tools:
        if shutil.which(tool) is None:
            print(f"error: `{tool}` not found (apt-get install -y wrk util-linux sqlite3 postgresql-client)")
            return 2
    if not hr.CLI.exists():
        print(f"error: {hr.CLI} not found; run with the project's virtualenv python", file=sys.stderr)
        return 2
    if (os.cpu_count() or 1) < 2:
        print("warning: fewer than 2 CPUs; server and wrk share one CPU, figures are not comparable")
        args.server_cpu = args.client_cpu = None

    signal.signal(signal.SIGTERM, hr._on_signal)
    signal.signal(signal.SIGINT, hr._on_signal)
    loadavg = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load average {loadavg} (other work on these CPUs skews the figures)", flush=True)
    started = time.monotonic()
    results: list[Result] = []
    try:
        for name in ("embedded", "postgres"):
            if args.only in (None, name):
                results.append(bench_backend(name, args))
    finally:
        hr.stop_all()

    print()
    for line in summary_lines(results):
        print(line)
    print(f"(took {time.monotonic() - started:.0f} s)")
    if args.markdown:
        command = " ".join([".venv/bin/python", "bench/classify_ratio.py", *sys.argv[1:]])
        args.markdown.write_text(markdown(results, args, hr.machine(loadavg), command))
        print(f"wrote {args.markdown}")
    failed = any(not r.meets_target or not r.rows_ok for r in results)
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
