from __future__ import annotations

from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api import __version__
from tests.factories import bearer, create_token


async def test_health_answers_with_status_region_and_version(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, token = await create_token(sessionmaker, pepper)
    response = await client.get("/v1/health", headers=bearer(token))
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "region": "local", "version": __version__}
