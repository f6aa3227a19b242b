"""Rate test data, stored through the service."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import date

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.kit.environment import Environment
from compliance_api.rates import service
from compliance_api.rates.service import Observation

AS_OF = date(2026, 6, 30)


def observations(sector: str, region: str, cents: Sequence[int], day: date = AS_OF) -> list[Observation]:
    return [Observation(sector, region, c, day) for c in cents]


async def store(
    session: AsyncSession,
    rows: Sequence[Observation],
    *,
    environment: Environment = Environment.live,
    window_months: int = 24,
    synthetic: bool = False,
) -> service.RateImportResult:
    return await service.add_observations(
        session,
        environment=environment,
        observations=rows,
        content_sha256=uuid.uuid4().hex,
        source="test",
        synthetic=synthetic,
        window_months=window_months,
    )


async def seed(
    sessionmaker: async_sessionmaker[AsyncSession],
    rows: Sequence[Observation],
    *,
    environment: Environment = Environment.live,
    synthetic: bool = False,
) -> None:
    async with sessionmaker.begin() as session:
        await store(session, rows, environment=environment, synthetic=synthetic)
