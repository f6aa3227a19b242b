"""Import a generated 1,000,000-row WTTA register, then re-import it unchanged, on SQLite and PostgreSQL.

Each import is a separate `compliance-api wtta import --quiet --json` process under `/usr/bin/time -v`, so the
figures are wall-clock time and the process's peak resident memory. Targets: first import <= 120 s (SQLite) and
<= 60 s (PostgreSQL); re-import <= first import; peak memory < 500 MB.

    .venv/bin/python bench/wtta_import.py [--rows 1000000] [--only sqlite|postgresql] [--keep DIR]

PostgreSQL uses the database `compliance_bench_wtta` (dropped and recreated; BENCH_PG_ADMIN_DSN overrides the
server). The register is written by `bench/wtta_generate.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
from harness import CLI, PG_ADMIN_DSN, SECRET_KEY

HERE = Path(__file__).parent
PG_DATABASE = "compliance_bench_wtta"
TARGET_SECONDS = {"sqlite": 120.0, "postgresql": 60.0}


async def fresh_pg_database() -> str:
    conn = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{PG_DATABASE}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{PG_DATABASE}"')
    finally:
        await conn.close()
    return PG_ADMIN_DSN.rsplit("/", 1)[0] + f"/{PG_DATABASE}"


def timed_import(register: Path, env: dict[str, str]) -> dict[str, object]:
    command = ["/usr/bin/time", "-v", str(CLI), "wtta", "import", str(register), "--quiet", "--json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"import failed:\n{done.stderr}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    assert wall
    assert rss
    seconds = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    return {"seconds": seconds, "peak_mb": int(rss.group(1)) / 1024, "result": json.loads(done.stdout)}


def run_backend(backend: str, register: Path, workdir: Path) -> list[str]:
    env = {
        **os.environ,
        "COMPLIANCE_SECRET_KEY": SECRET_KEY,
        "COMPLIANCE_VAR_DIR": str(workdir / backend),
        "REDIS_URL": "",
    }
    if backend == "postgresql":
        env["DATABASE_URL"] = asyncio.run(fresh_pg_database())
        subprocess.run([str(CLI), "migrate"], env=env, check=True, capture_output=True)
    else:
        env["DATABASE_URL"] = ""
    first = timed_import(register, env)
    again = timed_import(register, env)
    lines = []
    for label, run in (("first import", first), ("re-import, unchanged", again)):
        result = run["result"]
        assert isinstance(result, dict)
        lines.append(
            f"| {backend} | {label} | {run['seconds']:.1f} s | {run['peak_mb']:.0f} MB | "
            f"{result['rows_created']:,} new, {result['rows_unchanged']:,} unchanged |"
        )
    ok = (
        float(first["seconds"]) <= TARGET_SECONDS[backend]  # type: ignore[arg-type]
        and float(again["seconds"]) <= float(first["seconds"])  # type: ignore[arg-type]
        and max(float(first["peak_mb"]), float(again["peak_mb"])) < 500  # type: ignore[arg-type]
    )
    lines.append(f"| {backend} | targets met | {'yes' if ok else 'NO'} | | |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it (register and SQLite file)")
    args = parser.parse_args()
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="wtta-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    register = workdir / f"register-{args.rows}.csv"
    if not register.exists():
        subprocess.run(
            [sys.executable, str(HERE / "wtta_generate.py"), str(register), "--rows", str(args.rows)], check=True
        )
    print("| backend | run | wall time | peak memory | rows |")
    print("|---|---|---:|---:|---|")
    for backend in [args.only] if args.only else ["sqlite", "postgresql"]:
        for line in run_backend(backend, register, workdir):
            print(line, flush=True)


if __name__ == "__main__":
    main()
