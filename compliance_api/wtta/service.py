"""Reading the admission register cache: lookups, a number's status history, when the cache was last refreshed.

Imports that fill the cache are `register_import.py`.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.kit.environment import Environment
from compliance_api.wtta import queries
from compliance_api.wtta.download import Fetched
from compliance_api.wtta.models import WttaImport, WttaRefusedFile, WttaStatusChange


async def lookup(session: AsyncSession, *, environment: Environment, kvk_number: str) -> dict[str, Any] | None:
    """The cached admission's columns: one statement (a primary-key read), no ORM object (the hot path).

    `last_verified_at` is the later of the row's own stamp and the newest import that listed every cached number
    (such an import stamps itself instead of a million rows; see `register_import._apply`).
    """
    found = await queries.admission(session, environment, kvk_number)
    if found is None:
        return None
    covered_at = found.pop("covered_at")
    if covered_at is not None and covered_at > found["last_verified_at"]:
        found["last_verified_at"] = covered_at
    return found


async def history(session: AsyncSession, *, environment: Environment, kvk_number: str) -> list[WttaStatusChange]:
    """Every recorded status change of a number, oldest first."""
    return list(await queries.history(session, environment, kvk_number))


async def last_refreshed(session: AsyncSession, *, environment: Environment) -> datetime | None:
    """When an import (or a URL check that found the register unchanged) last finished in this environment."""
    return await queries.last_finished(session, environment)


async def last_url_import(session: AsyncSession, *, environment: Environment, url: str) -> WttaImport | None:
    """The newest import read from `url`, whose validators make the next download conditional."""
    return await queries.last_import_from(session, environment, url)


def _location_key(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


async def refused_file(session: AsyncSession, *, environment: Environment, url: str) -> WttaRefusedFile | None:
    """The file last refused from `url`, if no import from it succeeded since."""
    return await queries.refused_file(session, environment, _location_key(url))


async def remember_refused(
    session: AsyncSession, *, environment: Environment, url: str, fetched: Fetched, error: str, now: datetime
) -> None:
    """Keep what identifies a refused file (its validators and hash) and why it was refused, replacing the previous
    refusal from `url`."""
    await forget_refused(session, environment=environment, url=url)
    queries.add(
        session,
        WttaRefusedFile(
            environment=environment,
            location_sha256=_location_key(url),
            location=url,
            etag=fetched.etag,
            last_modified=fetched.last_modified,
            sha256=fetched.sha256 or "",
            error=error[:1000],
            refused_at=now,
        ),
    )


async def forget_refused(session: AsyncSession, *, environment: Environment, url: str) -> None:
    await queries.forget_refused(session, environment, _location_key(url))
