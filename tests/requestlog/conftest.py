"""Request log test helpers: the background flusher stays idle (a test flushes when it wants rows written), and every
row of the log can be read back whole."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from fastapi import FastAPI
from httpx import AsyncClient, Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.requestlog.buffer import RequestLogBuffer
from compliance_api.requestlog.models import ApiRequest


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"request_log_flush_seconds": 3600.0})


def request_log(app: FastAPI) -> RequestLogBuffer:
    buffer: RequestLogBuffer = app.state.services.request_log
    return buffer


async def flush(app: FastAPI) -> int:
    """Write what the app's buffer holds now (as its background task would within a second)."""
    return await request_log(app).flush()


async def stored_rows(sessionmaker: async_sessionmaker[AsyncSession]) -> list[dict[str, Any]]:
    """Every column of every row of the request log."""
    async with sessionmaker() as session:
        rows = (await session.scalars(select(ApiRequest))).all()
    return [{column.name: getattr(row, column.key) for column in ApiRequest.__table__.columns} for row in rows]


async def stored_text(sessionmaker: async_sessionmaker[AsyncSession]) -> str:
    """The whole request log as one text, to search for what must never be in it."""
    return orjson.dumps(await stored_rows(sessionmaker), default=str).decode()


async def until_rate_limited(client: AsyncClient, headers: dict[str, str], *, refused: int = 3) -> list[Response]:
    """Requests until `refused` of them were answered 429 (the bucket refills while a slow machine sends them, so a
    fixed count past the burst may never reach the limit); every answer, in order."""
    answers: list[Response] = []
    while sum(a.status_code == 429 for a in answers) < refused:
        assert len(answers) < 2000, "never rate limited"
        answers.append(await client.get("/v1/rates/sectors", headers=headers))
    return answers
