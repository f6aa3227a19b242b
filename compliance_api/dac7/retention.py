"""Production DAC7 records past the record-keeping period are wiped (Directive (EU) 2021/514, Annex V, Section III F).

A reporting platform operator keeps the records of its due diligence and reports for at least 5 and at most 10 years
after the end of the reportable period they relate to (`COMPLIANCE_DAC7_RETENTION_YEARS`, 10 by default: corrections
stay possible for as long as any member state may ask for them). With N years, a period Y is kept until the end of
year Y + N; on 1 January of Y + N + 1 its activities and what was reported for it go, and a seller with nothing left
of any kept period, whose identity was last changed before that day, goes with its identity. The sandbox has its own
30-day purge (`retention/rules.py`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import delete, exists, not_, select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.dac7.models import Dac7Activity, Dac7Report, Dac7Seller
from compliance_api.kit.environment import Environment

LIVE = Environment.live


@dataclass(frozen=True, slots=True)
class Wiped:
    activities: int
    reports: int
    sellers: int


def first_kept_year(now: dt.datetime, years: int) -> int:
    """The oldest reportable period still inside the record-keeping period."""
    return now.year - years


async def purge_expired(session: AsyncSession, years: int, now: dt.datetime) -> Wiped:
    """Delete production DAC7 records of periods past retention, in the caller's transaction."""
    kept_from = first_kept_year(now, years)
    start = dt.datetime(kept_from, 1, 1, tzinfo=dt.UTC)
    live_sellers = select(Dac7Seller.id).where(Dac7Seller.environment == LIVE)
    activities = await session.execute(
        delete(Dac7Activity).where(Dac7Activity.environment == LIVE, Dac7Activity.year < kept_from)
    )
    reports = await session.execute(
        delete(Dac7Report).where(Dac7Report.seller_id.in_(live_sellers), Dac7Report.year < kept_from)
    )
    sellers = await session.execute(
        delete(Dac7Seller).where(
            Dac7Seller.environment == LIVE,
            Dac7Seller.updated_at < start,
            not_(exists().where(Dac7Activity.seller_id == Dac7Seller.id)),
            not_(exists().where(Dac7Report.seller_id == Dac7Seller.id)),
        )
    )
    return Wiped(
        int(activities.rowcount),  # type: ignore[attr-defined]
        int(reports.rowcount),  # type: ignore[attr-defined]
        int(sellers.rowcount),  # type: ignore[attr-defined]
    )
