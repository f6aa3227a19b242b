"""What a verdict costs to keep: stored bytes per verdict (single calls and batches) and per Idempotency-Key record
of a batch, on SQLite and PostgreSQL, through a real `compliance-api serve`.

Per backend, on a fresh database: `--singles` single classifications, then `--batches` batches of 1000 items each
with its own Idempotency-Key, a mix of both tests, every country and language (as `bench/README.md` says). Stored
bytes are the growth of the `classification` table with its indexes (and, on PostgreSQL, its TOAST table) over each
phase, divided by the verdicts it added; PostgreSQL's figure is `pg_total_relation_size`, SQLite's the pages `dbstat`
counts. An idempotency record's bytes are its sealed `response_body`, set against the answer's size.

`--code DIR` serves another checkout's `compliance_api` (`git archive COMMIT | tar -x -C DIR`), for the figures
before a change: the script talks to the server only over HTTP and reads sizes only through SQL every version has.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import harness
import httpx

PG_DATABASE = os.environ.get("BENCH_STORAGE_PG_DATABASE", "compliance_bench_storage")
LANGUAGES = ("en", "nl", "fr", "de")
BATCH_ITEMS = 1000
CLASSIFICATION_OBJECTS = (
    "classification",
    "ix_classification_%",
    "pk_classification",
    "sqlite_autoindex_classification%",
)


CRITERIA = {
    "DE": ("subject_to_instructions", "fixed_working_hours", "paid_by_time", "no_own_business_premises"),
    "FR": ("client_gives_orders", "client_sets_schedule", "no_own_clientele", "single_client_dependency"),
    "BE": ("no_freedom_working_time", "no_financial_risk", "guaranteed_fixed_pay", "cannot_hire_or_substitute"),
}


def dutch(number: int) -> dict[str, Any]:
    engagement = {"hourly_rate_eur": 20 + number % 90, "own_tools": number % 2 == 0, "months_duration": number % 24}
    return {"engagement": engagement, **({"reference": f"contract-{number}"} if number % 3 == 0 else {})}


def cross_border(number: int) -> dict[str, Any]:
    country = ("DE", "FR", "BE")[number % 3]
    criteria = {name: (number >> bit) % 2 == 0 for bit, name in enumerate(CRITERIA[country])}
    return {
        "country": country,
        "criteria": criteria,
        **({"reference": f"contract-{number}"} if number % 3 == 0 else {}),
    }


def singles(count: int) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(path, body, language): half Dutch, half cross-border, every country and language in turn."""
    for number in range(count):
        language = LANGUAGES[number % len(LANGUAGES)]
        if number % 2:
            yield "/v1/classify/zelfstandigenwet", dutch(number), language
        else:
            yield "/v1/classify/cross-border", cross_border(number), language


@dataclass
class Figures:
    backend: str
    single_bytes: float
    batch_bytes: float
    answer_bytes: float
    record_bytes: float

    @property
    def record_share(self) -> float:
        return self.record_bytes / self.answer_bytes


class Sizes:
    """Reads table sizes and idempotency records straight from the database (not through the app)."""

    def __init__(self, backend: str, location: str) -> None:
        self.backend = backend
        self.location = location

    async def classification_bytes(self) -> int:
        if self.backend == "postgresql":
            connection = await asyncpg.connect(self.location)
            try:
                return int(await connection.fetchval("SELECT pg_total_relation_size('classification')"))
            finally:
                await connection.close()
        with sqlite3.connect(self.location) as connection:
            row = connection.execute(
                "SELECT SUM(pgsize) FROM dbstat WHERE name IN "
                "(SELECT name FROM sqlite_master WHERE tbl_name = 'classification')"
            ).fetchone()
            return int(row[0] or 0)

    async def record_bytes(self) -> list[int]:
        statement = "SELECT length(response_body) FROM idempotency_record WHERE response_body IS NOT NULL"
        if self.backend == "postgresql":
            connection = await asyncpg.connect(self.location)
            try:
                return [int(row[0]) for row in await connection.fetch(statement)]
            finally:
                await connection.close()
        with sqlite3.connect(self.location) as connection:
            return [int(row[0]) for row in connection.execute(statement)]


async def _fresh_postgres() -> str:
    admin = await asyncpg.connect(harness.PG_ADMIN_DSN)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{PG_DATABASE}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{PG_DATABASE}"')
    finally:
        await admin.close()
    return f"postgresql://postgres@127.0.0.1:5432/{PG_DATABASE}"


def measure(backend: str, count: int, batches: int, code: Path | None, workdir: Path) -> Figures:
    env = harness.base_env(workdir)
    env["COMPLIANCE_ACCESS_LOG"] = "false"
    if code is not None:
        env["PYTHONPATH"] = str(code)
    if backend == "postgresql":
        env["DATABASE_URL"] = location = asyncio.run(_fresh_postgres())
    else:
        location = str(workdir / "var" / "compliance.db")
    harness.cli(env, workdir, "migrate")
    token = harness.create_token(env, workdir, "internal")
    sizes = Sizes(backend, location)
    server = harness.Server(backend, env, workdir, cpu=None)
    server.start()
    try:
        with httpx.Client(base_url=server.base_url, timeout=120, headers={"Authorization": f"Bearer {token}"}) as http:
            empty = asyncio.run(sizes.classification_bytes())
            for path, body, language in singles(count):
                answer = http.post(path, json=body, headers={"Accept-Language": language})
                answer.raise_for_status()
            after_singles = asyncio.run(sizes.classification_bytes())
            answers = []
            for batch in range(batches):
                first = batch * BATCH_ITEMS
                for path, make in (
                    ("/v1/classify/zelfstandigenwet/batch", dutch),
                    ("/v1/classify/cross-border/batch", cross_border),
                ):
                    keyed = {"Idempotency-Key": str(uuid.uuid4()), "Accept-Language": LANGUAGES[batch % len(LANGUAGES)]}
                    items = [make(number) for number in range(first, first + BATCH_ITEMS)]
                    answer = http.post(path, json={"items": items}, headers=keyed)
                    answer.raise_for_status()
                    answers.append(len(answer.content))
            after_batches = asyncio.run(sizes.classification_bytes())
            records = asyncio.run(sizes.record_bytes())
    finally:
        server.stop()
    batch_verdicts = 2 * batches * BATCH_ITEMS
    return Figures(
        backend,
        (after_singles - empty) / count,
        (after_batches - after_singles) / batch_verdicts,
        sum(answers) / len(answers),
        sum(records) / len(records),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    parser.add_argument("--singles", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=3, help="rounds of one Dutch and one cross-border batch")
    parser.add_argument("--code", type=Path, help="serve this checkout's compliance_api instead")
    args = parser.parse_args()
    harness.stop_on_signals()
    backends = [args.only] if args.only else ["sqlite", "postgresql"]
    print(f"code: {args.code or 'this checkout'}; {args.singles} single verdicts, {args.batches} x 2 keyed batches")
    rows = []
    for backend in backends:
        with tempfile.TemporaryDirectory(prefix="bench-storage-") as folder:
            figures = measure(backend, args.singles, args.batches, args.code, Path(folder))
        rows.append(
            [
                figures.backend,
                f"{figures.single_bytes:,.0f}",
                f"{figures.batch_bytes:,.0f}",
                f"{figures.answer_bytes:,.0f}",
                f"{figures.record_bytes:,.0f}",
                f"{figures.record_share:.1%}",
            ]
        )
    header = (
        "backend",
        "bytes/verdict (single)",
        "bytes/verdict (batch)",
        "answer/batch",
        "idempotency/batch",
        "share",
    )
    print("\n".join(harness.table(header, "lrrrrr", rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
