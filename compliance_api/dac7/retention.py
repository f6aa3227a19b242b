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

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.dac7 import queries


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
    return Wiped(*await queries.purge_live(session, kept_from, start))
