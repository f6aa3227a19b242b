"""`compliance-api classifications purge` deletes only what is past retention."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify import service
from compliance_api.classify.models import Classification
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import ZelfstandigenwetRequest
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from tests.classify.conftest import caller_for
from tests.cli.conftest import invoke
from tests.factories import create_user


async def test_purge_deletes_expired_records_only(
    cli_env: dict[str, str], audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    user = await create_user(sessionmaker)
    body = ZelfstandigenwetRequest.model_validate({"engagement": {}})
    now = utcnow()
    ages = {
        Environment.live: [dt.timedelta(days=3 * 366), dt.timedelta(days=30)],
        Environment.test: [dt.timedelta(days=11), dt.timedelta(days=1)],
    }
    for environment, environment_ages in ages.items():
        for age in environment_ages:
            await service.classify_engagement(
                audit, caller_for(user, environment), body, packaged_rulesets(), now - age
            )
    env = {**cli_env, "COMPLIANCE_CLASSIFICATION_RETENTION_YEARS": "2", "COMPLIANCE_SANDBOX_RETENTION_DAYS": "10"}

    code, out, _ = await asyncio.to_thread(invoke, env, "classifications", "purge", "--json")

    assert code == 0
    assert json.loads(out) == {"deleted": {"live": 1, "test": 1}}
    async with sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(Classification)) == 2
