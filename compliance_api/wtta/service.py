"""Reading the admission register cache: lookups, a number's status history, when the cache was last refreshed.

Imports that fill the cache are `register_import.py`.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.kit.environment import Environment, scoped
from compliance_api.wtta.download import Fetched
from compliance_api.wtta.models import WttaAdmission, WttaImport, WttaRefusedFile, WttaStatusChange


async def lookup(session: AsyncSession, *, environment: Environment, kvk_number: str) -> dict[str, Any] | None:
    """The cached admission's columns: one statement (a primary-key read), no ORM object (the hot path).

    `last_verified_at` is the later of the row's own stamp and the newest import that listed every cached number
    (such an import stamps itself instead of a million rows; see `register_import._apply`).
    """
    covered = scoped(select(func.max(WttaImport.finished_at)), WttaImport, environment).where(WttaImport.covers_all)
    statement = scoped(
        select(WttaAdmission.__table__, covered.scalar_subquery().label("covered_at")), WttaAdmission, environment
    ).where(WttaAdmission.kvk_number == kvk_number)
    row = (await session.execute(statement)).mappings().first()
    if row is None:
        return None
    found = dict(row)
    covered_at = found.pop("covered_at")
    if covered_at is not None and covered_at > found["last_verified_at"]:
        found["last_verified_at"] = covered_at
    return found


async def history(session: AsyncSession, *, environment: Environment, kvk_number: str) -> list[WttaStatusChange]:
    """Every recorded status change of a number, oldest first."""
    statement = scoped(select(WttaStatusChange), WttaStatusChange, environment).where(
        WttaStatusChange.kvk_number == kvk_number
    )
    return list((await session.scalars(statement.order_by(WttaStatusChange.id))).all())


async def last_refreshed(session: AsyncSession, *, environment: Environment) -> datetime | None:
    """When an import (or a URL check that found the register unchanged) last finished in this environment."""
    statement = scoped(select(func.max(WttaImport.finished_at)), WttaImport, environment)
    value: datetime | None = await session.scalar(statement)
    return value


async def last_url_import(session: AsyncSession, *, environment: Environment, url: str) -> WttaImport | None:
    """The newest import read from `url`, whose validators make the next download conditional."""
    statement = scoped(select(WttaImport), WttaImport, environment).where(WttaImport.location == url)
    return await session.scalar(statement.order_by(WttaImport.finished_at.desc()).limit(1))


def _location_key(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


async def refused_file(session: AsyncSession, *, environment: Environment, url: str) -> WttaRefusedFile | None:
    """The file last refused from `url`, if no import from it succeeded since."""
    return await session.get(WttaRefusedFile, (environment, _location_key(url)))


async def remember_refused(
    session: AsyncSession, *, environment: Environment, url: str, fetched: Fetched, error: str, now: datetime
) -> None:
    """Keep what identifies a refused file (its validators and hash) and why it was refused, replacing the previous
    refusal from `url`."""
    await forget_refused(session, environment=environment, url=url)
    session.add(
        WttaRefusedFile(
            environment=environment,
            location_sha256=_location_key(url),
            location=url,
            etag=fetched.etag,
            last_modified=fetched.last_modified,
            sha256=fetched.sha256 or "",
            error=error[:1000],
            refused_at=now,
        )
    )


async def forget_refused(session: AsyncSession, *, environment: Environment, url: str) -> None:
    await session.execute(
        delete(WttaRefusedFile).where(
            WttaRefusedFile.environment == environment, WttaRefusedFile.location_sha256 == _location_key(url)
        )
    )
