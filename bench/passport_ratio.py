"""What passports cost: `GET /v1/passport` (the own passport) and `GET /v1/passport/{token}/verify` (a verifier's
signed summary, every verification recorded) against `GET /v1/health` in the same server process and run.

For each backend, one server process with ONE worker pinned to CPU 0, `wrk` pinned to CPU 1 (the machinery of
`harness.py`):

* embedded: SQLite in a temporary directory, no REDIS_URL (in-process limiter)
* postgres: PostgreSQL (database `compliance_bench_passport`, created and migrated if missing) and Redis db 5

Targets: `rps(verify) / rps(/v1/health) >= 0.5`, `rps(own) / rps(/v1/health) >= 0.7`, p99 of both <= 50 ms at 64
connections. Each round measures the three routes back to back (order rotating between rounds), each after a short
warm-up, with `internal`-plan tokens (never rate limited) and the access log on: the ratios are paired comparisons,
robust to other work on the machine, while absolute rps are not. After the load the script checks that every
verification was recorded: the share's view rows (counted with `sqlite3` / `psql`, not through the app) must equal
the verify 200s in the server's access log (warm-ups included), and so must its `passport.share.viewed` events.

    .venv/bin/python bench/passport_ratio.py [--only embedded|postgres] [--duration 10] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import asyncio
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

PG_DATABASE = os.environ.get("BENCH_PASSPORT_PG_DATABASE", "compliance_bench_passport")
PG_URL = f"postgresql://postgres@127.0.0.1:5432/{PG_DATABASE}"
REDIS_URL = os.environ.get("BENCH_PASSPORT_REDIS_URL", "redis://127.0.0.1:6379/5")
HEALTH, OWN, VERIFY = "/v1/health", "/v1/passport", "/v1/passport/{token}/verify"
ROUTES = (HEALTH, OWN, VERIFY)
TARGETS = {OWN: 0.7, VERIFY: 0.5}
P99_TARGET_MS = 50.0


def backend_env(name: str, workdir: Path) -> dict[str, str]:
    env = harness.base_env(workdir)  # SQLite under workdir/var, no Redis
    if name == "postgres":
        # As in production: the webhook worker is its own process, not a task of the API server.
        env.update(DATABASE_URL=PG_URL, REDIS_URL=REDIS_URL, COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER="false")
    return env


def query(name: str, workdir: Path, sql: str) -> int:
    """One count, read with the database's own client (not through the app)."""
    if name == "postgres":
        argv = ["psql", PG_URL, "-tAc", sql]
    else:
        argv = ["sqlite3", str(workdir / "var" / "compliance.db"), sql]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr}")
    return int(done.stdout.strip())


def recorded(name: str, workdir: Path, verifier: str) -> tuple[int, int]:
    """(view rows, `passport.share.viewed` events) of the bench verifier."""
    views = query(
        name,
        workdir,
        "SELECT count(*) FROM passport_share_view v JOIN user_account u ON u.id = v.viewer_user_id "
        f"WHERE u.email = '{verifier}'",
    )
    # The viewer id is inside the JSON payload; the bench database holds no other verifier's views of this share.
    events = query(name, workdir, "SELECT count(*) FROM outbox_event WHERE type = 'passport.share.viewed'")
    return views, events


@dataclass
class Result:
    name: str
    runs: dict[str, list[Run]]
    views: int
    events: int
    logged: dict[int, int]  # access-log status counts for the verify route (warm-ups included)

    def rps(self, route: str) -> float:
        return mean_rps(self.runs[route])

    def p99(self, route: str) -> float:
        return worst_p99(self.runs[route])

    def ratio(self, route: str) -> float:
        return self.rps(route) / self.rps(HEALTH)

    def round_ratios(self, route: str) -> list[float]:
        return [r.rps / h.rps for r, h in zip(self.runs[route], self.runs[HEALTH], strict=True)]

    def meets(self, route: str) -> bool:
        return self.ratio(route) >= TARGETS[route] and self.p99(route) <= P99_TARGET_MS

    @property
    def recorded_ok(self) -> bool:
        return self.views == self.events == self.logged.get(200, 0)


def setup(name: str, env: dict[str, str], workdir: Path) -> tuple[str, str, str, str]:
    """A freelancer with three verifications and a share-token, a verifier: (own token, verifier token, share
    token, verifier email)."""
    harness.cli(env, workdir, "migrate")
    suffix = uuid.uuid4().hex[:12]
    freelancer, verifier = f"bench-freelancer-{suffix}@example.com", f"bench-verifier-{suffix}@example.com"
    harness.cli(env, workdir, "users", "create", freelancer, "--kind", "freelancer", "--plan", "internal")
    harness.cli(env, workdir, "users", "create", verifier, "--plan", "internal")
    for check in ("identity", "kvk_registration", "vat_number"):
        harness.cli(env, workdir, "passport", "verify", freelancer, check)
    share = harness.cli(env, workdir, "passport", "share", freelancer).splitlines()[-1].strip()
    own = harness.cli(env, workdir, "tokens", "create", freelancer).splitlines()[-1].strip()
    verifier_token = harness.cli(env, workdir, "tokens", "create", verifier).splitlines()[-1].strip()
    return own, verifier_token, share, verifier


def bench_backend(name: str, args: argparse.Namespace) -> Result:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-passport-{name}-"))
    server = None
    try:
        env = backend_env(name, workdir)
        if name == "postgres":
            asyncio.run(harness.ensure_pg_database(PG_DATABASE))
        own, verifier_token, share, verifier = setup(name, env, workdir)
        views_before, events_before = recorded(name, workdir, verifier)
        script = workdir / "report.lua"
        script.write_text(harness.WRK_REPORT)
        server = harness.Server(name, env, workdir, args.server_cpu)
        server.start()
        assert server.log_path is not None
        print(
            f"[{name}] server pid {server.pid} on port {server.port} (CPU {args.server_cpu}), files in {workdir}",
            flush=True,
        )
        tokens = {HEALTH: verifier_token, OWN: own, VERIFY: verifier_token}

        def measure(route: str, seconds: float) -> Run:
            url = server.base_url + route.format(token=share)
            return harness.measured(
                server,
                url,
                seconds,
                cpu=args.client_cpu,
                connections=args.connections,
                token=tokens[route],
                script=script,
            )

        runs: dict[str, list[Run]] = {route: [] for route in ROUTES}
        for round_no in range(args.rounds):
            for route in ROUTES[round_no % 3 :] + ROUTES[: round_no % 3]:
                if args.warmup > 0:
                    measure(route, args.warmup)
                run = measure(route, args.duration)
                runs[route].append(run)
                print(f"[{name}] round {round_no + 1} {route:28} {run.figures(p50_width=7)}", flush=True)
        server.stop()  # SIGTERM: uvicorn finishes the requests in flight (and their commits) first
        views, events = recorded(name, workdir, verifier)
        logged = harness.logged_statuses(server.log_path, VERIFY)
        result = Result(name, runs, views - views_before, events - events_before, logged)
        print(
            f"[{name}] view rows {result.views}, viewed events {result.events}, verify 200s in the access log "
            f"{logged.get(200, 0)} (other statuses {({s: n for s, n in logged.items() if s != 200}) or 'none'}): "
            f"{'ok' if result.recorded_ok else 'MISMATCH'}",
            flush=True,
        )
        return result
    finally:
        if server is not None:
            server.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def _per_round(values: list[float]) -> str:
    return ", ".join(f"{x:.2f}" for x in values)


def summary_lines(results: list[Result]) -> list[str]:
    lines = []
    for r in results:
        lines.append(f"{r.name:8}  {HEALTH:28} rps={r.rps(HEALTH):7.1f} p99={r.p99(HEALTH):8.2f} ms")
        for route in (OWN, VERIFY):
            lines.append(
                f"{r.name:8}  {route:28} rps={r.rps(route):7.1f} p99={r.p99(route):8.2f} ms  "
                f"ratio={r.ratio(route):.2f} (per round {_per_round(r.round_ratios(route))}; target >= "
                f"{TARGETS[route]} and p99 <= {P99_TARGET_MS:.0f} ms: {'met' if r.meets(route) else 'NOT MET'})"
            )
        lines.append(
            f"{r.name:8}  recorded: views {r.views} = events {r.events} = verify 200s {r.logged.get(200, 0)}: "
            f"{'ok' if r.recorded_ok else 'MISMATCH'}"
        )
        if any(run.non2xx or run.socket_errors for runs in r.runs.values() for run in runs):
            lines.append(f"{r.name:8}  WARNING: non-2xx answers or socket errors during the load runs (see above)")
    return lines


def markdown(results: list[Result], args: argparse.Namespace, info: dict[str, str], command: str) -> str:
    out = [
        *harness.preamble(args, info, command, "rps is the mean of the rounds, p99 the worst"),
        "",
        "| backend | /v1/health rps | own rps | own ratio (per round) | own p99 | verify rps "
        "| verify ratio (per round) | verify p99 | views = events = 200s |",
        "|---|---:|---:|---|---:|---:|---|---:|---|",
    ]
    for r in results:
        out.append(
            f"| {r.name} | {r.rps(HEALTH):.0f} | {r.rps(OWN):.0f} | {r.ratio(OWN):.2f} "
            f"({_per_round(r.round_ratios(OWN))}) | {r.p99(OWN):.1f} ms | {r.rps(VERIFY):.0f} | "
            f"{r.ratio(VERIFY):.2f} ({_per_round(r.round_ratios(VERIFY))}) | {r.p99(VERIFY):.1f} ms | "
            f"{r.views} = {r.events} = {r.logged.get(200, 0)} {'yes' if r.recorded_ok else '**no**'} |"
        )
    out += [
        "",
    ]
    rows = [
        row for r in results for row in harness.run_rows(r.name, ((f"`{route}`", r.runs[route]) for route in ROUTES))
    ]
    out += harness.table(("backend", "round", "route", *harness.RUN_HEADER[3:]), harness.RUN_ALIGN, rows)
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["embedded", "postgres"], help="Run one backend only.")
    parser.add_argument("--duration", type=int, default=10, help="Seconds per measurement (default 10).")
    parser.add_argument("--warmup", type=float, default=2, help="Warm-up seconds before each measurement (2).")
    parser.add_argument("--rounds", type=int, default=3, help="Rounds per backend, order rotating (3).")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections (64).")
    parser.add_argument("--server-cpu", type=int, default=0, help="CPU for the server (0).")
    parser.add_argument("--client-cpu", type=int, default=1, help="CPU for wrk (1).")
    parser.add_argument("--markdown", type=Path, help="Also write the results as Markdown to this file.")
    parser.add_argument("--strict", action="store_true", help="Exit 1 when a target or the record check fails.")
    parser.add_argument("--keep", action="store_true", help="Keep the temporary directories (server logs, SQLite).")
    args = parser.parse_args()

    tools = ["wrk", "taskset", "sqlite3"] + (["psql"] if args.only != "embedded" else [])
    missing = harness.preflight(args, tools, "wrk util-linux sqlite3 postgresql-client")
    if missing is not None:
        return missing

    harness.stop_on_signals()
    loadavg = harness.load_average()
    print(f"load average {loadavg} (other work on these CPUs moves rps; compare the ratios)", flush=True)
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
        command = " ".join([".venv/bin/python", "bench/passport_ratio.py", *sys.argv[1:]])
        args.markdown.write_text(markdown(results, args, harness.machine(loadavg), command))
        print(f"wrote {args.markdown}")
    failed = any(not r.recorded_ok or not all(r.meets(route) for route in TARGETS) for r in results)
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
