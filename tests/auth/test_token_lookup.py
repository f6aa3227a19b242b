"""A token read from the database is cached before its use is written: on SQLite under load that write waits its
turn for seconds, and a busy token's entry must not expire while it does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from fastapi import FastAPI
from httpx import AsyncClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from compliance_api.auth import tokens
from compliance_api.auth.cache import CachedToken
from compliance_api.auth.models import ApiToken
from tests.conftest import commits
from tests.factories import bearer, create_token


@asynccontextmanager
async def _token_row_locked(engine: AsyncEngine, token: ApiToken) -> AsyncIterator[None]:
    """Another connection holds the lock a write of the token's row needs (SQLite: the database's write lock)."""
    async with engine.connect() as blocker:
        if engine.dialect.name == "sqlite":
            await blocker.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            await blocker.begin()
            await blocker.execute(text("SELECT 1 FROM api_token WHERE id = :id FOR UPDATE"), {"id": token.id})
        try:
            yield
        finally:
            await blocker.rollback()


@commits
async def test_a_token_is_cached_once_read_while_its_last_use_is_still_being_written(
    app: FastAPI,
    client: AsyncClient,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    token, secret = await create_token(sessionmaker, pepper)
    cache = app.state.services.token_cache
    cached = asyncio.Event()
    put = cache.put

    def put_and_say(token_hash: str, entry: CachedToken) -> None:
        put(token_hash, entry)
        cached.set()

    monkeypatch.setattr(cache, "put", put_and_say)
    async with _token_row_locked(engine, token):
        request = asyncio.create_task(client.get("/v1/health", headers=bearer(secret)))
        async with asyncio.timeout(30):
            await cached.wait()
        assert cache.get(tokens.hash_token(secret, pepper))[0] is not None
        assert not request.done()  # the first request waits for the write; the cache did not
    assert (await request).status_code == 200
    async with sessionmaker() as session:
        stamped = await session.get(ApiToken, token.id)
        assert stamped is not None
        assert stamped.last_used_at is not None
