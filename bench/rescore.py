"""How long the law-change re-score takes: `rescore` of N monitored Dutch classifications on PostgreSQL, every one
of which changes verdict (EUR 37 an hour, every criterion favourable, classified as of 2025-03-01 under the EUR 36
threshold: `safe`; re-scored as of today under EUR 38: at least `risky`), so each writes a new verdict and an event.

The classifications are made through the classify service (its group commit) in a fresh database
`compliance_bench_rescore`; then one `rescore` runs in one transaction, as the CLI and the worker run it. Target:
100,000 in at most 60 s.

    .venv/bin/python bench/rescore.py [--count 100000] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import time
import uuid

import asyncpg  # type: ignore[import-untyped]
from sqlalchemy import func, select

from compliance_api.accounts import service as accounts
from compliance_api.accounts.models import Plan, UserKind
from compliance_api.auth.caller import Caller
from compliance_api.classify import service as classify
from compliance_api.classify.models import ClassificationVerdict
from compliance_api.classify.rescore import rescore
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import ZelfstandigenwetRequest
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.kit.batch_writer import batch_writer_for
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.migrate import upgrade
from compliance_api.ratelimit.tiers import tier_for

SERVER = "postgresql://postgres@127.0.0.1:5432"
DATABASE = "compliance_bench_rescore"
REQUEST = {
    "as_of": "2025-03-01",
    "monitor": True,
    "engagement": {
        "hourly_rate_eur": 37,
        "months_duration": 6,
        "days_per_week": 3,
        "other_clients_count": 3,
        "own_tools": True,
        "own_liability": True,
        "sets_own_hours": True,
        "can_delegate": True,
        "profit_risk": True,
    },
}


async def _fresh_database() -> None:
    admin = await asyncpg.connect(f"{SERVER}/postgres")
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{DATABASE}"')
    finally:
        await admin.close()


async def _classify(engine: object, caller: Caller, count: int) -> None:
    """`count` monitored verdicts through the classify service, 2,000 requests in flight at a time."""
    audit = GroupCommit(batch_writer_for(engine))  # type: ignore[arg-type]
    body = ZelfstandigenwetRequest.model_validate(REQUEST)
    rulesets = packaged_rulesets()
    try:
        for start in range(0, count, 2000):
            calls = [
                classify.classify_engagement(audit, caller, body, rulesets, utcnow())
                for _ in range(min(2000, count - start))
            ]
            verdicts = await asyncio.gather(*calls)
            assert {v.verdict for v in verdicts} == {"safe"}, "the bench needs verdicts that the re-score changes"
    finally:
        await audit.close()


async def main(count: int) -> dict[str, float]:
    await _fresh_database()
    engine = create_engine(f"postgresql+asyncpg://postgres@127.0.0.1:5432/{DATABASE}")
    await upgrade(engine)
    sessionmaker = create_sessionmaker(engine)
    async with sessionmaker.begin() as session:
        user = await accounts.create(session, email="bench@example.com", kind=UserKind.business, plan=Plan.pro)
    caller = Caller(
        user.id,
        uuid.uuid4(),
        Environment.live,
        Plan.pro,
        UserKind.business,
        tier_for(Plan.pro, Environment.live),
        "0000",
    )
    started = time.perf_counter()
    await _classify(engine, caller, count)
    setup = time.perf_counter() - started
    now = utcnow()
    started = time.perf_counter()
    async with sessionmaker.begin() as session:
        report = await rescore(
            session, packaged_rulesets(), Environment.live, as_of=now.date(), now=now, since=now - dt.timedelta(days=1)
        )
    seconds = time.perf_counter() - started
    async with sessionmaker() as session:
        stored = await session.scalar(select(func.count()).select_from(ClassificationVerdict))
    await engine.dispose()
    assert report.examined == count, report.examined
    assert len(report.changes) == count == stored, (len(report.changes), stored)
    return {"count": count, "setup_seconds": setup, "rescore_seconds": seconds, "per_second": count / seconds}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--markdown")
    arguments = parser.parse_args()
    result = asyncio.run(main(arguments.count))
    line = (
        f"| {result['count']:,} | {result['rescore_seconds']:.1f} s | {result['per_second']:,.0f}/s "
        f"| {result['setup_seconds']:.1f} s |"
    )
    table = "| monitored (all change) | rescore | rate | setup (classify service) |\n|---|---|---|---|\n" + line
    print(table)
    if arguments.markdown:
        with open(arguments.markdown, "w", encoding="utf-8") as out:
            out.write(table + "\n")
