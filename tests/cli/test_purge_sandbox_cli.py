"""`compliance-api purge-sandbox` prints what it deleted per table; `--dry-run` deletes nothing."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify.models import Classification
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.retention.rules import RULES
from tests.cli.conftest import invoke
from tests.retention import families


async def _count(sessionmaker: async_sessionmaker[AsyncSession], environment: Environment) -> int:
    async with sessionmaker() as session:
        statement = select(func.count()).select_from(Classification).where(Classification.environment == environment)
        return await session.scalar(statement) or 0


async def test_dry_run_then_purge_print_counts_per_table(
    cli_env: dict[str, str], audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await families.classifications(audit, sessionmaker, dt.timedelta(days=5))

    code, out, _ = await asyncio.to_thread(
        invoke, cli_env, "purge-sandbox", "--older-than-days", "3", "--dry-run", "--json"
    )

    assert code == 0
    dry = json.loads(out)
    assert dry["dry_run"] is True
    # the verdict and its classification.created event
    assert dry["deleted"] == {rule.name: int(rule.name in {"classification", "outbox_event"}) for rule in RULES}
    assert await _count(sessionmaker, Environment.test) == 1

    code, out, _ = await asyncio.to_thread(invoke, cli_env, "purge-sandbox", "--older-than-days", "3")

    assert code == 0
    assert ": 2 deleted" in out
    assert "  classification: 1\n" in out
    assert "  dac7_seller: 0\n" in out
    assert await _count(sessionmaker, Environment.test) == 0
    assert await _count(sessionmaker, Environment.live) == 1


async def test_default_retention_keeps_younger_rows(
    cli_env: dict[str, str], audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await families.classifications(audit, sessionmaker, dt.timedelta(days=5))

    code, out, _ = await asyncio.to_thread(invoke, cli_env, "purge-sandbox", "--json")

    assert code == 0
    assert json.loads(out)["deleted"]["classification"] == 0
    assert await _count(sessionmaker, Environment.test) == 1


def test_retention_beyond_thirty_days_is_refused(cli_env: dict[str, str]) -> None:
    code, _, err = invoke(cli_env, "purge-sandbox", "--older-than-days", "31")
    assert code == 2
    assert "--older-than-days" in err
