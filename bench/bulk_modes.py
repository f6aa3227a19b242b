"""`compliance-api classify bulk` over HTTP: batches or single calls, and which batch size and concurrency.

One server (`compliance-api serve`, one worker pinned to CPU 0; SQLite, or PostgreSQL + Redis with `--backend
postgres`) and a token of the `internal` plan (never rate limited, so the figures are the server's and the client's).
The same CSV of `--rows` engagements (two Dutch rows for every German one) is classified, from this script pinned to
CPU 1, in each of these ways:

* the command's code (`cli.classify.over_http_run`) with each `--batch-size`/`--concurrency` pair, a fresh run id
  each (nothing replayed); then the default pair twice on one run id, the second run timed: the resume of a run
  whose every batch was answered, all replayed;
* single calls, one per row under a per-row Idempotency-Key, `--single-concurrency` requests in flight (httpx, the
  same client settings): the alternative to batches;
* the command itself as a process (`classify bulk --base-url`), defaults, start-up included.

Per way: rows/s and the ratio to the command's default (batch 100, concurrency 4) measured in the same run, the
requests charged against the rate limit (a batch: one per started 100 items; a single call: one) and how long the
limit alone makes a run of `--rows` take at the `free` tier (60 a minute after a burst of 120). Afterwards the
classifications of the bench user are counted with sqlite3 / psql: exactly one per row and way, none for a replay.

    .venv/bin/python bench/bulk_modes.py [--backend embedded|postgres] [--rows 10000] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
import classify_ratio as cr
import harness

from compliance_api.cli.bulk import over_http
from compliance_api.cli.bulk.over_http import Retries
from compliance_api.cli.bulk.rows import Request, Row, RowOutcome, batches, read_rows
from compliance_api.cli.bulk.runner import Pacing, Report
from compliance_api.cli.classify import over_http_run

DEFAULT = (100, 4)
FREE_BURST, FREE_PER_SECOND = 120, 1.0


@dataclass
class Way:
    name: str
    seconds: float
    charged: int
    classified: int  # new classifications expected (0 for the replay)

    def rows_per_second(self, rows: int) -> float:
        return rows / self.seconds


def engagements(count: int) -> bytes:
    lines = ["country,reference,hourly_rate_eur,months_duration,own_tools,subject_to_instructions"]
    for n in range(count):
        lines.append(
            f"DE,de-{n},,,,{'yes' if n % 2 else 'no'}" if n % 3 == 0 else f"NL,nl-{n},{30 + n % 90},{n % 24},yes,"
        )
    return ("\n".join(lines) + "\n").encode()


def discard(_rows: Sequence[Row], _outcomes: Mapping[int, RowOutcome]) -> None:
    """The results of a timed run are not written."""


def batch_charge(rows: list[Row], batch_size: int) -> int:
    return sum(math.ceil(len(batch.rows) / 100) for batch in batches(rows, batch_size, ""))


async def timed(work: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await work()
    return time.perf_counter() - started


async def batched(base_url: str, token: str, rows: list[Row], batch_size: int, concurrency: int, run_id: str) -> float:
    http = over_http.client(base_url, token, 60)
    return await timed(
        lambda: over_http_run(rows, http, Retries(), discard, Report(), Pacing(batch_size, run_id, concurrency))
    )


async def singles(base_url: str, token: str, rows: list[Row], concurrency: int) -> float:
    """One call per row, each under its own key, `concurrency` in flight on as many connections."""
    run = uuid.uuid4().hex
    gate = asyncio.Semaphore(concurrency)

    async def one(http: httpx.AsyncClient, line: int, request: Request) -> None:
        async with gate:
            path = request.endpoint.value.removesuffix("/batch")
            answer = await http.post(path, json=dict(request.body), headers={"Idempotency-Key": f"{run}-{line}"})
            answer.raise_for_status()

    async def all_rows() -> None:
        transport = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=concurrency))
        async with over_http.client(base_url, token, 60, transport) as http:
            await asyncio.gather(*(one(http, row.line, row.parsed) for row in rows if isinstance(row.parsed, Request)))

    return await timed(all_rows)


def batched_rounds(url: str, token: str, rows: list[Row], size: int, concurrency: int) -> Callable[[int], float]:
    """A round of the command's code with a run id of its own (nothing replayed)."""

    def run(number: int) -> float:
        return asyncio.run(batched(url, token, rows, size, concurrency, f"{size}x{concurrency}-{number}"))

    return run


def replay_rounds(url: str, token: str, rows: list[Row]) -> Callable[[int], float]:
    """A round that runs the default on a run id of its own, then again: the second run, timed, is all replays."""

    def run(number: int) -> float:
        asyncio.run(batched(url, token, rows, *DEFAULT, f"replayed-{number}"))
        return asyncio.run(batched(url, token, rows, *DEFAULT, f"replayed-{number}"))

    return run


def single_rounds(url: str, token: str, rows: list[Row], concurrency: int) -> Callable[[int], float]:
    def run(_: int) -> float:
        return asyncio.run(singles(url, token, rows, concurrency))

    return run


def command(server: harness.Server, token: str, csv: Path, workdir: Path, cpu: int | None, run_id: str) -> float:
    env = {**harness.base_env(workdir), "COMPLIANCE_API_TOKEN": token}
    argv = [str(harness.CLI), "classify", "bulk", str(csv), "--out", str(workdir / "out.csv"), "--run-id", run_id]
    started = time.perf_counter()
    done = subprocess.run(
        harness.pinned(cpu, [*argv, "--base-url", server.base_url]),
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"classify bulk failed: {done.stderr}")
    return time.perf_counter() - started


def free_tier_minutes(charged: int) -> float:
    return max(0, charged - FREE_BURST) / FREE_PER_SECOND / 60


def count_all(name: str, workdir: Path, email: str) -> int:
    sql = f"SELECT count(*) FROM classification c JOIN user_account u ON u.id = c.user_id WHERE u.email = '{email}'"
    argv = (
        ["psql", cr.PG_URL, "-tAc", sql]
        if name == "postgres"
        else ["sqlite3", str(workdir / "var" / "compliance.db"), sql]
    )
    return int(subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout.strip())


def median_seconds(rounds: int, run: Callable[[int], float]) -> float:
    """The median of `rounds` runs (round number given), as other work on the machine moves single figures."""
    return statistics.median(run(number) for number in range(rounds))


def measure(args: argparse.Namespace, workdir: Path) -> list[str]:
    env = cr.backend_env(args.backend, workdir)
    if args.backend == "postgres":
        asyncio.run(harness.ensure_pg_database(cr.PG_DATABASE))
    harness.cli(env, workdir, "migrate")
    email = f"bench-bulk-{uuid.uuid4().hex[:12]}@example.com"
    harness.cli(env, workdir, "users", "create", email, "--plan", "internal")
    token = harness.cli(env, workdir, "tokens", "create", email).splitlines()[-1].strip()
    raw = engagements(args.rows)
    csv = workdir / "engagements.csv"
    csv.write_bytes(raw)
    rows = list(read_rows(io.BytesIO(raw), None)[1])
    server = harness.Server(args.backend, env, workdir, args.server_cpu)
    server.start()
    if args.client_cpu is not None:
        os.sched_setaffinity(0, {args.client_cpu})
    url, rounds, ways = server.base_url, args.rounds, []
    asyncio.run(batched(url, token, rows[:200], *DEFAULT, "warm-up"))
    for size, concurrency in args.pairs:
        seconds = median_seconds(rounds, batched_rounds(url, token, rows, size, concurrency))
        ways.append(
            Way(f"batches of {size}, {concurrency} in flight", seconds, batch_charge(rows, size), len(rows) * rounds)
        )
    seconds = median_seconds(rounds, replay_rounds(url, token, rows))
    ways.append(
        Way("the default, run again: every batch replayed", seconds, batch_charge(rows, DEFAULT[0]), len(rows) * rounds)
    )
    few = rows[: args.single_rows]
    for concurrency in args.single_concurrency:
        seconds = median_seconds(rounds, single_rounds(url, token, few, concurrency))
        scaled = seconds * len(rows) / len(few)
        ways.append(Way(f"single calls, {concurrency} in flight", scaled, len(rows), len(few) * rounds))
    seconds = median_seconds(rounds, lambda n: command(server, token, csv, workdir, args.client_cpu, f"process-{n}"))
    ways.append(
        Way(
            "`classify bulk --base-url` (process, defaults)",
            seconds,
            batch_charge(rows, DEFAULT[0]),
            len(rows) * rounds,
        )
    )
    server.stop()
    stored = count_all(args.backend, workdir, email)
    expected = 200 + sum(way.classified for way in ways)
    baseline = next(w for w in ways if w.name == f"batches of {DEFAULT[0]}, {DEFAULT[1]} in flight")
    lines = [
        f"`.venv/bin/python bench/bulk_modes.py --backend {args.backend} --rows {args.rows}`: one server worker on "
        f"CPU {args.server_cpu}, the client on CPU {args.client_cpu}; median of {rounds} rounds; single calls timed "
        f"over {len(few):,} rows and scaled. Load average before: {args.load}.",
        "",
        *harness.table(
            ("way", "seconds", "rows/s", "speed against the default", "requests charged", "waiting at the free tier"),
            "lrrrrr",
            [
                (
                    way.name,
                    f"{way.seconds:.2f}",
                    f"{way.rows_per_second(args.rows):,.0f}",
                    f"{baseline.seconds / way.seconds:.2f}",
                    f"{way.charged:,}",
                    f"{free_tier_minutes(way.charged):,.0f} min",
                )
                for way in ways
            ],
        ),
    ]
    check = "ok" if stored == expected else "MISMATCH"
    lines.append("")
    lines.append(
        f"Classifications stored: {stored:,}; expected {expected:,} (one per row sent, none replayed): {check}"
    )
    return lines


def pair(text: str) -> tuple[int, int]:
    size, _, concurrency = text.partition("x")
    return int(size), int(concurrency)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["embedded", "postgres"], default="embedded")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument(
        "--pairs", type=pair, nargs="+", default=[(100, 1), (100, 2), (100, 4), (100, 8), (1000, 1), (1000, 4)]
    )
    parser.add_argument("--single-concurrency", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--single-rows", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--client-cpu", type=int, default=1)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    if (
        code := harness.preflight(args, ("taskset", "sqlite3", "psql"), "util-linux sqlite3 postgresql-client")
    ) is not None:
        return code
    workdir = Path(tempfile.mkdtemp(prefix="bench-bulk-"))
    harness.stop_on_signals()
    try:
        args.load = harness.load_average()
        lines = measure(args, workdir)
    finally:
        harness.stop_all()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print("\n".join(lines))
    if args.markdown:
        Path(args.markdown).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
