"""An export reads a period page by page; every page brings its own re-scores, accounts and tokens."""

from __future__ import annotations

import datetime as dt

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify import service
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import ZelfstandigenwetRequest
from compliance_api.dossier.service import Period, count_period, stream_period
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from tests.classify.conftest import caller_for
from tests.factories import create_user

START = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)


async def test_pages_of_two_yield_every_row_once_oldest_first_with_its_asker(
    audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    users = [await create_user(sessionmaker) for _ in range(2)]
    body = ZelfstandigenwetRequest.model_validate({"engagement": {}})
    made = []
    for index in range(5):
        user = users[index % 2]
        verdict = await service.classify_engagement(
            audit, caller_for(user, Environment.live), body, packaged_rulesets(), START + dt.timedelta(hours=index)
        )
        made.append((str(verdict.id), user.email))
    period = Period(Environment.live, START, START + dt.timedelta(days=1))
    since = START - dt.timedelta(days=1)
    async with sessionmaker() as session:
        assert await count_period(session, period, since) == 5
        streamed = [
            (str(facts.found.record.id), facts.asker.account.email if facts.asker.account else None)
            async for facts in stream_period(session, period, since, page_rows=2)
        ]
    assert streamed == made
