"""Retention test helpers: counting rows per table and environment, and purging at a moment in the future."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ColumnElement, Table, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.dac7.models import Dac7Report, Dac7Seller
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport.models import Passport, PassportShare, PassportShareView, PassportVerification
from compliance_api.rates.models import RateBenchmark
from compliance_api.retention.rules import RULES, PurgeRule
from compliance_api.retention.service import PurgeReport, purge_sandbox

TABLES: tuple[Table, ...] = (
    *(rule.table for rule in RULES if isinstance(rule, PurgeRule)),
    RateBenchmark.__table__,  # type: ignore[arg-type]
)


def _in(table: Table, environment: Environment) -> ColumnElement[bool]:
    """The rows of `table` in `environment` (tables without the column belong to their parent's)."""
    if "environment" in table.c:
        return table.c.environment == environment
    parents: dict[str, ColumnElement[bool]] = {
        PassportVerification.__tablename__: PassportVerification.passport_id.in_(
            select(Passport.id).where(Passport.environment == environment)
        ),
        PassportShareView.__tablename__: PassportShareView.share_id.in_(
            select(PassportShare.id).where(PassportShare.environment == environment)
        ),
        Dac7Report.__tablename__: Dac7Report.seller_id.in_(
            select(Dac7Seller.id).where(Dac7Seller.environment == environment)
        ),
    }
    return parents[table.name]


async def counts(sessionmaker: async_sessionmaker[AsyncSession], environment: Environment) -> dict[str, int]:
    """Rows per purged table in one environment."""
    async with sessionmaker() as session:
        return {
            table.name: await session.scalar(select(func.count()).select_from(table).where(_in(table, environment)))
            or 0
            for table in TABLES
        }


def days_ahead(days: float) -> dt.datetime:
    return utcnow() + dt.timedelta(days=days)


async def purge_in(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, days: float, *, dry_run: bool = False
) -> PurgeReport:
    """Travel `days` ahead and purge there."""
    return await purge_sandbox(sessionmaker, settings, now=days_ahead(days), dry_run=dry_run)
