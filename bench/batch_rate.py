"""Batch classification throughput: Dutch verdicts per second through `POST /v1/classify/zelfstandigenwet/batch`
(1000 items per call, every verdict kept in the audit trail) for ONE API worker pinned to CPU 0, wrk on CPU 1 (the
machinery of `harness.py` and `classify_ratio.py`). Target: >= 5,000 verdicts/s per worker on
SQLite and on PostgreSQL.

The audit rows of the bench user are counted with the database's own client afterwards: they must equal the
verdicts wrk was answered with.

    .venv/bin/python bench/batch_rate.py [--only embedded|postgres] [--duration 10] [--connections 4] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import classify_ratio as cr
import harness

ROUTE = "/v1/classify/zelfstandigenwet/batch"
ITEMS = 1000


def batch_script() -> str:
    """wrk Lua: POST a batch of 1000 Dutch requests on every call, plus the shared report."""
    body = json.dumps({"items": [cr.BODY] * ITEMS}, separators=(",", ":"))
    return (
        'wrk.method = "POST"\n'
        f"wrk.body = {json.dumps(body)}\n"
        'wrk.headers["Content-Type"] = "application/json"\n' + harness.WRK_REPORT
    )


def bench_backend(name: str, args: argparse.Namespace) -> str:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-batch-{name}-"))
    server = None
    try:
        env = cr.backend_env(name, workdir)
        if name == "postgres":
            asyncio.run(harness.ensure_pg_database(cr.PG_DATABASE))
        harness.cli(env, workdir, "migrate")
        email = f"bench-batch-{uuid.uuid4().hex[:12]}@example.com"
        harness.cli(env, workdir, "users", "create", email, "--plan", "internal")
        token = harness.cli(env, workdir, "tokens", "create", email).splitlines()[-1].strip()
        script = workdir / "batch.lua"
        script.write_text(batch_script())
        server = harness.Server(name, env, workdir, args.server_cpu)
        server.start()
        before = cr.count_rows(name, workdir, email)
        harness.wrk(
            server.base_url + ROUTE, 2, cpu=args.client_cpu, connections=args.connections, token=token, script=script
        )
        run = harness.wrk(
            server.base_url + ROUTE,
            args.duration,
            cpu=args.client_cpu,
            connections=args.connections,
            token=token,
            script=script,
        )
        server.stop()
        rows = cr.count_rows(name, workdir, email) - before
        verdicts_per_second = run.rps * ITEMS
        p50, p99 = f"{run.p50_ms:.0f} ms", f"{run.p99_ms:.0f} ms"
        line = harness.table_row(
            [name, f"{run.rps:.2f}", f"{verdicts_per_second:,.0f}", p50, p99, run.non2xx, f"{rows:,}"]
        )
        print(line, flush=True)
        return line
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["embedded", "postgres"])
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--client-cpu", type=int, default=1)
    parser.add_argument("--markdown")
    args = parser.parse_args()
    columns = ("backend", "batches/s", "verdicts/s", "p50", "p99", "non-2xx", "audit rows written (incl. warm-up)")
    header = "\n".join(harness.table(columns, "lllllll", []))
    print(header)
    harness.stop_on_signals()
    try:
        lines = [bench_backend(name, args) for name in ("embedded", "postgres") if args.only in (None, name)]
    finally:
        harness.stop_all()
    if args.markdown:
        Path(args.markdown).write_text(header + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
