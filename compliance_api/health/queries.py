"""The health probe's statements, each on a connection of its own. The probe that calls them is `probe.py`."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from compliance_api.wtta.models import WttaImport

LAST_REFRESHES = select(WttaImport.environment, func.max(WttaImport.finished_at)).group_by(WttaImport.environment)


async def ping(connection: AsyncConnection) -> None:
    await connection.execute(text("SELECT 1"))


async def last_refreshes(connection: AsyncConnection) -> list[tuple[str, dt.datetime]]:
    """Each environment's last finished WTTA register import."""
    return [(row[0], row[1]) for row in await connection.execute(LAST_REFRESHES)]
