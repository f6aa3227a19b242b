"""A request never holds one database connection while it waits for another (`compliance_api/sessions.py`)."""

from __future__ import annotations

import pytest
from fastapi import APIRouter, Request
from httpx import ASGITransport, AsyncClient, Response
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from compliance_api.config import Settings
from compliance_api.db import create_sessionmaker
from compliance_api.sessions import DbSession, NestedSession, OneConnectionPerTask, sessionmaker_of, transaction
from tests.conftest import running_app

routes = APIRouter()


@routes.get("/test-only/second-session")
async def second_session(request: Request, session: DbSession) -> dict[str, int]:
    """What the dashboard's dossier download did: the request's session in use, then a session of its own."""
    await session.execute(text("SELECT 1"))
    async with sessionmaker_of(request)() as own:
        return {"value": int(await own.scalar(text("SELECT 2")) or 0)}


@routes.get("/test-only/one-after-the-other")
async def one_after_the_other(request: Request) -> dict[str, int]:
    """Two transactions in turn, each given back before the next: allowed."""
    total = 0
    for value in (1, 2):
        async with transaction(request) as session:
            total += int(await session.scalar(text(f"SELECT {value}")) or 0)
    return {"value": total}


async def _get(settings: Settings, path: str) -> Response:
    async with running_app(settings, routes) as app:
        async with AsyncClient(transport=ASGITransport(app=app), base_url="http://api.test") as http:
            return await http.get(path)


async def test_a_session_of_its_own_beside_the_requests_session_fails_the_request(settings: Settings) -> None:
    """The guard fails the request (and so any test of such an endpoint) instead of letting it wait for the pool."""
    assert (await _get(settings, "/test-only/second-session")).status_code == 500


async def test_a_second_connection_of_one_task_is_refused(engine: AsyncEngine) -> None:
    guarded = create_sessionmaker(engine, OneConnectionPerTask)
    async with guarded() as first:
        await first.execute(text("SELECT 1"))
        async with guarded() as second:
            with pytest.raises(NestedSession):
                await second.execute(text("SELECT 2"))
        await first.commit()
        async with guarded() as after_the_first_gave_its_connection_back:
            assert await after_the_first_gave_its_connection_back.scalar(text("SELECT 3")) == 3


async def test_sessions_one_after_the_other_are_fine(settings: Settings) -> None:
    assert (await _get(settings, "/test-only/one-after-the-other")).json() == {"value": 3}
