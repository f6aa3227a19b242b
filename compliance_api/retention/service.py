"""Purge the sandbox: every registry rule in one transaction, committed, or rolled back for a dry run."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.retention import queries
from compliance_api.retention.rules import RULES, Step


@dataclass(frozen=True, slots=True)
class PurgeReport:
    cutoff: dt.datetime
    deleted: dict[str, int]
    dry_run: bool

    @property
    def total(self) -> int:
        return sum(self.deleted.values())

    def as_json(self) -> dict[str, object]:
        return {"cutoff": self.cutoff.isoformat(), "dry_run": self.dry_run, "deleted": self.deleted}


def cutoff_for(now: dt.datetime, days: int) -> dt.datetime:
    """Sandbox rows last written before this instant are past retention."""
    return now - dt.timedelta(days=days)


async def purge(
    session: AsyncSession, *, cutoff: dt.datetime, settings: Settings, rules: Sequence[Step] = RULES
) -> dict[str, int]:
    """Apply every rule in the caller's transaction; returns rows deleted per table, in registry order."""
    if session.get_bind().dialect.name == "postgresql":  # two workers purging at once take turns
        await queries.lock_purge(session)
    deleted: dict[str, int] = {}
    for rule in rules:
        deleted[rule.name] = await rule.run(session, cutoff=cutoff, settings=settings, done=deleted)
    return deleted


async def purge_sandbox(
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: Settings,
    *,
    now: dt.datetime,
    days: int | None = None,
    dry_run: bool = False,
) -> PurgeReport:
    """One transaction: commit, or for a dry run count the same deletions and roll them back."""
    cutoff = cutoff_for(now, days or settings.sandbox_retention_days)
    async with sessionmaker() as session:
        deleted = await purge(session, cutoff=cutoff, settings=settings)
        if dry_run:
            await session.rollback()
        else:
            await session.commit()
    return PurgeReport(cutoff=cutoff, deleted=deleted, dry_run=dry_run)
