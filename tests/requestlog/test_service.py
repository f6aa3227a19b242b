"""Usage per day and token, and the 30 days the log keeps (the daily purge, and reads that never show older rows)."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import Plan, UserKind
from compliance_api.auth.caller import Caller
from compliance_api.auth.models import ApiToken
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.ratelimit.tiers import FREE
from compliance_api.requestlog import service
from compliance_api.requestlog.buffer import Recorded, RequestLogBuffer
from tests.conftest import CURSORS
from tests.factories import create_token, create_user
from tests.requestlog.conftest import stored_rows

Maker = async_sessionmaker[AsyncSession]
NOW = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)


def _caller(token: ApiToken) -> Caller:
    return Caller(token.user_id, token.id, token.environment, Plan.free, UserKind.business, FREE, token.last4)


async def _log(audit: GroupCommit, entries: list[tuple[ApiToken, dt.datetime, int]]) -> None:
    buffer = RequestLogBuffer(audit, capacity=10_000, flush_seconds=3600)
    for token, at, status in entries:
        buffer.record(
            Recorded(
                at.timestamp(),
                _caller(token),
                "GET",
                "/v1/rates/sectors",
                "/v1/rates/sectors",
                status,
                0.001,
                "r",
                0,
                None,
            )
        )
    assert await buffer.flush() == len(entries)


async def test_usage_counts_requests_and_429s_per_day_and_token_in_one_environment(
    audit: GroupCommit, sessionmaker: Maker, pepper: bytes
) -> None:
    user = await create_user(sessionmaker)
    payroll, _ = await create_token(sessionmaker, pepper, user=user, name="payroll")
    hr, _ = await create_token(sessionmaker, pepper, user=user, name="hr")
    sandbox, _ = await create_token(sessionmaker, pepper, user=user, environment=Environment.test)
    yesterday = NOW - dt.timedelta(days=1)
    await _log(
        audit,
        [
            (payroll, NOW, 200),
            (payroll, NOW, 429),
            (payroll, yesterday, 200),
            (hr, NOW, 404),
            (sandbox, NOW, 200),
            (payroll, NOW - dt.timedelta(days=30), 200),  # the day before the 30 shown
        ],
    )
    async with sessionmaker() as session:
        usage = await service.usage(session, service.LogOwner(user.id, Environment.live), NOW)
    assert len(usage.days) == 30
    assert (usage.days[0].day, usage.days[-1].day) == (dt.date(2026, 10, 27), dt.date(2026, 11, 25))
    assert (usage.days[-1].requests, usage.days[-1].rate_limited) == (3, 1)
    assert usage.days[-2].requests == 1
    assert (usage.requests, usage.rate_limited) == (4, 1)
    assert [(t.name, t.requests, t.rate_limited) for t in usage.tokens] == [("payroll", 3, 1), ("hr", 1, 0)]
    assert usage.tokens[0].days[-1].rate_limited_share == 0.5


async def test_the_log_keeps_30_days(audit: GroupCommit, sessionmaker: Maker, pepper: bytes) -> None:
    token, _ = await create_token(sessionmaker, pepper)
    now = utcnow()
    await _log(audit, [(token, now - dt.timedelta(days=31), 200), (token, now - dt.timedelta(days=29), 200)])
    owner = service.LogOwner(token.user_id, Environment.live)
    async with sessionmaker() as session:
        listed = await service.list_requests(
            session, owner, service.Filters(), limit=10, cursor=None, cursors=CURSORS, now=now
        )
    assert len(listed.rows) == 1
    async with sessionmaker.begin() as session:
        assert await service.purge_expired(session, now) == 1
    assert len(await stored_rows(sessionmaker)) == 1


async def test_a_request_of_another_account_is_not_found(
    audit: GroupCommit, sessionmaker: Maker, pepper: bytes
) -> None:
    token, _ = await create_token(sessionmaker, pepper)
    await _log(audit, [(token, utcnow(), 200)])
    [row] = await stored_rows(sessionmaker)
    async with sessionmaker() as session:
        own = await service.get_request(session, service.LogOwner(token.user_id, Environment.live), row["id"], utcnow())
        other = await service.get_request(
            session, service.LogOwner(uuid.uuid4(), Environment.live), row["id"], utcnow()
        )
        sandbox = await service.get_request(
            session, service.LogOwner(token.user_id, Environment.test), row["id"], utcnow()
        )
    assert own is not None
    assert own.token_name == "test"
    assert (other, sandbox) == (None, None)
