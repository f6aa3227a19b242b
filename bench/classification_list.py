"""`GET /v1/classifications` at scale: one page of 100 out of 1,000,000 classifications of one account, on
PostgreSQL, through the listing service (the query the endpoint runs), first page and deep pages (cursor), with and
without a filter. Prints p50/p99 over the calls and the query plan. Target: p99 <= 20 ms.

The million rows are written with one `INSERT ... SELECT generate_series` (a real verdict body, copied), into a
fresh database `compliance_bench_list`.

    .venv/bin/python bench/classification_list.py [--rows 1000000] [--calls 300] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gc
import statistics
import time
import uuid

import asyncpg  # type: ignore[import-untyped]
import orjson

from compliance_api.accounts import service as accounts
from compliance_api.accounts.models import Plan, UserKind
from compliance_api.auth.caller import Caller
from compliance_api.classify import listing, views
from compliance_api.classify.language import DEFAULT_LANGUAGE
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import ClassificationList, ZelfstandigenwetRequest
from compliance_api.classify.service import score_engagement
from compliance_api.classify.verdict import Verdict
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.pagination import Cursors, cursor_page
from compliance_api.migrate import upgrade
from compliance_api.ratelimit.tiers import tier_for

SERVER = "postgresql://postgres@127.0.0.1:5432"
DATABASE = "compliance_bench_list"
CURSORS = Cursors.from_secrets([b"bench secret, only seals the cursors of this run"])
FILL = """
INSERT INTO classification (id, environment, user_id, token_id, kind, ruleset_id, ruleset_version, request, result,
    verdict, original_verdict, ruleset_valid_from, monitor, language, created_at)
SELECT gen_random_uuid(), 'live', $1, $2, 'zelfstandigenwet', 'nl-zw', '2026-07-09', '{"engagement": {}}'::json,
    $3::json, (ARRAY['safe', 'risky', 'unsafe'])[1 + n % 3], (ARRAY['safe', 'risky', 'unsafe'])[1 + n % 3],
    '2026-07-09', n % 2 = 0, 'en',
    now() - make_interval(secs => n)
FROM generate_series(1, $4) AS n
"""


async def _fill(rows: int) -> Caller:
    admin = await asyncpg.connect(f"{SERVER}/postgres")
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{DATABASE}"')
    finally:
        await admin.close()
    engine = create_engine(f"postgresql+asyncpg://postgres@127.0.0.1:5432/{DATABASE}")
    await upgrade(engine)
    async with create_sessionmaker(engine).begin() as session:
        user = await accounts.create(session, email="list@example.com", kind=UserKind.business, plan=Plan.pro)
    await engine.dispose()
    connection = await asyncpg.connect(f"{SERVER}/{DATABASE}")
    try:
        body = ZelfstandigenwetRequest.model_validate_json(b'{"engagement": {"hourly_rate_eur": 95}}')
        result = orjson.dumps(
            score_engagement(body, packaged_rulesets(), utcnow(), DEFAULT_LANGUAGE, Environment.live).verdict
        ).decode()
        await connection.execute(FILL, user.id, uuid.uuid4(), result, rows)
        await connection.execute("ANALYZE classification")
    finally:
        await connection.close()
    return Caller(
        user.id,
        uuid.uuid4(),
        Environment.live,
        Plan.pro,
        UserKind.business,
        tier_for(Plan.pro, Environment.live),
        "0000",
    )


async def _timings(caller: Caller, calls: int, filters: listing.ClassificationFilter, deep: int) -> list[float]:
    engine = create_engine(f"postgresql+asyncpg://postgres@127.0.0.1:5432/{DATABASE}")
    sessionmaker = create_sessionmaker(engine)
    since = utcnow() - dt.timedelta(days=365 * 7)
    cursor = None
    async with sessionmaker() as session:  # warm-up: the pool's first connection is not part of the figure
        await listing.list_classifications(
            session, caller, filters, limit=100, cursor=None, cursors=CURSORS, since=since
        )
    gc.collect()
    gc.freeze()  # as the app does once started (app.py): full collections then skip the long-lived objects
    if deep:  # a cursor half way down
        async with sessionmaker() as session:
            for _ in range(deep):
                page = await listing.list_classifications(
                    session, caller, filters, limit=100, cursor=cursor, cursors=CURSORS, since=since
                )
                cursor = page.next_cursor
    seconds: list[float] = []
    for _ in range(calls):
        async with sessionmaker() as session:
            started = time.perf_counter()
            page = await listing.list_classifications(
                session, caller, filters, limit=100, cursor=cursor, cursors=CURSORS, since=since
            )
            answer = cursor_page(ClassificationList, page, views.classification_summary)  # what the endpoint answers
            seconds.append(time.perf_counter() - started)
            assert len(answer.data) == 100
    await engine.dispose()
    return seconds


async def _plan(caller: Caller) -> str:
    connection = await asyncpg.connect(f"{SERVER}/{DATABASE}")
    try:
        rows = await connection.fetch(
            "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT * FROM classification WHERE environment = 'live' "
            "AND user_id = $1 AND created_at >= now() - interval '7 years' ORDER BY created_at DESC, id DESC LIMIT 101",
            caller.user_id,
        )
    finally:
        await connection.close()
    return "\n".join(row[0] for row in rows)


async def main(rows: int, calls: int) -> str:
    started = time.perf_counter()
    caller = await _fill(rows)
    fill = time.perf_counter() - started
    lines = [
        f"{rows:,} classifications of one account written in {fill:.0f} s; {calls} calls per case, 100 per page.",
        "",
        "| case | p50 | p99 | max |",
        "|---|---|---|---|",
    ]
    half = rows // 200
    cases = {
        "first page": (listing.ClassificationFilter(), 0),
        f"page {half + 1} (cursor)": (listing.ClassificationFilter(), half),
        "first page, verdict=risky": (listing.ClassificationFilter(verdict=Verdict.risky), 0),
    }
    for name, (filters, deep) in cases.items():
        seconds = sorted(await _timings(caller, calls, filters, deep))
        p99 = seconds[min(len(seconds) - 1, int(len(seconds) * 0.99))]
        p50, worst = statistics.median(seconds), seconds[-1]
        lines.append(f"| {name} | {p50 * 1000:.1f} ms | {p99 * 1000:.1f} ms | {worst * 1000:.1f} ms |")
    lines += ["", "```", await _plan(caller), "```"]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--markdown")
    arguments = parser.parse_args()
    report = asyncio.run(main(arguments.rows, arguments.calls))
    print(report)
    if arguments.markdown:
        with open(arguments.markdown, "w", encoding="utf-8") as out:
            out.write(report + "\n")
