"""Rate benchmarks: recompute time at 10,000,000 observations, and endpoint throughput against `/v1/health`.

* `recompute`: PostgreSQL database `BENCH_PG_DATABASE` (default `compliance_bench_rates`; created, migrated, its rate
  tables emptied), 10,000,000 observations inserted with `generate_series` (25 sectors × 13 regions, dates over
  three years so the 24-month window drops about a third), then `rates.service.recompute` of every benchmark timed
  `--rounds` times, each in its own committed transaction. Target: <= 60 s.
* `throughput`: one server (one worker on CPU 0, wrk on CPU 1, through `harness.py`) per backend, production
  observations from the synthetic generator; `GET /v1/rates/benchmark?sector=ict&region=NL` against
  `GET /v1/health` with the same token, alternating order, after a warm-up. Target: ratio >= 0.8.

    .venv/bin/python bench/rates.py [--only recompute|throughput] [--rows 10000000] [--backend embedded|redis]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from harness import (
    REDIS_URL,
    WRK_REPORT,
    Run,
    Server,
    base_env,
    cli,
    create_token,
    ensure_pg_database,
    measured,
    stop_all,
    stop_on_signals,
    wrk,
)
from sqlalchemy import text

from compliance_api.config import Settings
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.kit.environment import Environment
from compliance_api.migrate import upgrade
from compliance_api.rates import service
from compliance_api.rates.catalogue import REGIONS, SECTORS

PG_DATABASE = os.environ.get("BENCH_PG_DATABASE", "compliance_bench_rates")
PG_URL = f"postgresql://postgres@127.0.0.1:5432/{PG_DATABASE}"
AS_OF = date(2026, 6, 30)

FILL = """
INSERT INTO rate_observation (environment, import_id, sector, region, rate_cents, observed_on, synthetic)
SELECT 'live', :import_id,
       (CAST(:sectors AS text[]))[1 + (i % :n_sectors)],
       (CAST(:regions AS text[]))[1 + ((i / :n_sectors) % :n_regions)],
       2000 + floor(random() * 15000)::int + (CASE WHEN i % 997 = 0 THEN 500000 ELSE 0 END),
       CAST(:as_of AS date) - floor(random() * 1095)::int,
       false
FROM generate_series(1, :rows) AS i
"""

INDEXES = {
    "ix_rate_observation_pair": "environment, sector, region, observed_on) INCLUDE (rate_cents, synthetic",
    "ix_rate_observation_environment": "environment",
    "ix_rate_observation_import_id": "import_id",
}


async def bench_recompute(rows: int, rounds: int) -> list[float]:
    await ensure_pg_database(PG_DATABASE)
    engine = create_engine(Settings(database_url=PG_URL).resolved_database_url)
    await upgrade(engine)
    sessionmaker = create_sessionmaker(engine)
    async with engine.begin() as conn:
        await conn.execute(text("TRUNCATE rate_benchmark, rate_observation, rate_import"))
        import_id = (
            await conn.execute(
                text(
                    "INSERT INTO rate_import (id, environment, content_sha256, source, synthetic, row_count,"
                    " imported_at) VALUES (gen_random_uuid(), 'live', 'bench', 'bench', false, :rows, now())"
                    " RETURNING id"
                ),
                {"rows": rows},
            )
        ).scalar_one()
    started = time.monotonic()
    async with engine.begin() as conn:
        for name in INDEXES:  # filling first and indexing after is several times faster
            await conn.execute(text(f"DROP INDEX IF EXISTS {name}"))
        await conn.execute(
            text(FILL),
            {
                "import_id": import_id,
                "sectors": list(SECTORS),
                "regions": list(REGIONS),
                "n_sectors": len(SECTORS),
                "n_regions": len(REGIONS),
                "as_of": AS_OF,
                "rows": rows,
            },
        )
        for name, columns in INDEXES.items():
            await conn.execute(text(f"CREATE INDEX {name} ON rate_observation ({columns})"))
    async with engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("VACUUM ANALYZE rate_observation"))
    print(f"[recompute] inserted {rows:,} observations in {time.monotonic() - started:.1f} s", flush=True)
    timings = []
    for round_no in range(rounds):
        started = time.monotonic()
        async with sessionmaker.begin() as session:
            count = await service.recompute(session, environment=Environment.live, window_months=24)
        timings.append(time.monotonic() - started)
        print(f"[recompute] round {round_no + 1}: {count} benchmarks in {timings[-1]:.2f} s", flush=True)
    async with sessionmaker() as session:
        used = await session.scalar(text("SELECT sum(sample_size) FROM rate_benchmark WHERE region <> 'NL'"))
        print(f"[recompute] observations inside the windows (provinces): {used:,}", flush=True)
    await engine.dispose()
    return timings


def bench_throughput(backend: str, args: argparse.Namespace) -> tuple[list[Run], list[Run]]:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-rates-{backend}-"))
    server = None
    try:
        env = base_env(workdir)
        if backend == "redis":
            env.update(DATABASE_URL=PG_URL, REDIS_URL=REDIS_URL)
            asyncio.run(ensure_pg_database(PG_DATABASE))
        cli(env, workdir, "migrate")
        token = create_token(env, workdir, "internal")
        cli(env, workdir, "rates", "generate", "--env", "live", "--allow-synthetic", "--as-of", AS_OF.isoformat())
        script = workdir / "report.lua"
        script.write_text(WRK_REPORT)
        server = Server(f"rates-{backend}", env, workdir, args.server_cpu)
        server.start()
        paths = {"benchmark": "/v1/rates/benchmark?sector=ict&region=NL", "health": "/v1/health"}
        runs: dict[str, list[Run]] = {"benchmark": [], "health": []}
        for round_no in range(args.rounds):
            for kind in ("benchmark", "health") if round_no % 2 == 0 else ("health", "benchmark"):
                url = server.base_url + paths[kind]
                wrk(url, args.warmup, cpu=args.client_cpu, connections=args.connections, token=token, script=script)
                run = measured(
                    server,
                    url,
                    args.duration,
                    cpu=args.client_cpu,
                    connections=args.connections,
                    token=token,
                    script=script,
                )
                runs[kind].append(run)
                print(
                    f"[{backend}] round {round_no + 1} {kind:9} rps={run.rps:8.1f} p50={run.p50_ms:6.2f} ms"
                    f" p99={run.p99_ms:7.2f} ms server cpu={run.server_cpu:4.0%} non2xx={run.non2xx}",
                    flush=True,
                )
        return runs["benchmark"], runs["health"]
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> int:
    stop_on_signals()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["recompute", "throughput"])
    parser.add_argument("--backend", choices=["embedded", "redis"], action="append")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--client-cpu", type=int, default=1)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}", flush=True)
    ok = True
    try:
        if args.only in (None, "recompute"):
            timings = asyncio.run(bench_recompute(args.rows, args.rounds))
            ok &= max(timings) <= 60
            print(f"recompute {args.rows:,}: worst {max(timings):.2f} s (target <= 60 s)", flush=True)
        if args.only in (None, "throughput"):
            for backend in args.backend or ["embedded", "redis"]:
                benchmark, health = bench_throughput(backend, args)
                ratio = sum(r.rps for r in benchmark) / sum(r.rps for r in health)
                ok &= ratio >= 0.8
                print(f"[{backend}] ratio rps(benchmark)/rps(health) = {ratio:.2f} (target >= 0.8)", flush=True)
    finally:
        stop_all()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
