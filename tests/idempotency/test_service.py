"""The Idempotency-Key kit on its own: replay, mismatch, a real concurrent duplicate, failures, expiry, purge."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid

import pytest
from fastapi import FastAPI
from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.requests import Request
from starlette.responses import Response

from compliance_api.accounts.models import User
from compliance_api.auth.caller import Caller
from compliance_api.errors import ApiError
from compliance_api.idempotency import dependencies
from compliance_api.idempotency import service as idempotency
from compliance_api.idempotency.models import IdempotencyRecord
from compliance_api.idempotency.service import Idempotency, check_key, fingerprint
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.ratelimit.tiers import tier_for
from tests.factories import create_user


class Created(BaseModel):
    id: str
    secret: str


class Work:
    """A `run` that counts its calls and can be held until released."""

    def __init__(self) -> None:
        self.calls = 0
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self) -> Created:
        self.calls += 1
        self.started.set()
        await self.release.wait()
        return Created(id=str(uuid.uuid4()), secret="pst_" + uuid.uuid4().hex)


@pytest.fixture
async def caller(sessionmaker: async_sessionmaker[AsyncSession]) -> Caller:
    user: User = await create_user(sessionmaker)
    environment = Environment.live
    return Caller(user.id, uuid.uuid4(), environment, user.plan, user.kind, tier_for(user.plan, environment), "abcd")


def idempotency_of(app: FastAPI) -> Idempotency:
    return dependencies.idempotency_of(Request({"type": "http", "app": app}))


async def call(
    app: FastAPI,
    sessionmaker: async_sessionmaker[AsyncSession],
    caller: Caller,
    work: Work,
    key: str | None,
    body: str = "a",
) -> Response:
    async with sessionmaker.begin() as session:
        return await idempotency_of(app).answer(
            caller,
            session,
            key,
            fingerprint("POST", "/v1/things", Created(id=body, secret="")),
            work,
            status_code=201,
        )


async def records(sessionmaker: async_sessionmaker[AsyncSession]) -> int:
    async with sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(IdempotencyRecord)) or 0)


async def test_without_a_key_every_call_runs(
    app: FastAPI, sessionmaker: async_sessionmaker[AsyncSession], caller: Caller
) -> None:
    work = Work()
    first = await call(app, sessionmaker, caller, work, None)
    second = await call(app, sessionmaker, caller, work, None)
    assert work.calls == 2
    assert first.body != second.body
    assert await records(sessionmaker) == 0


async def test_a_retry_replays_the_first_result(
    app: FastAPI, sessionmaker: async_sessionmaker[AsyncSession], caller: Caller
) -> None:
    work = Work()
    first = await call(app, sessionmaker, caller, work, "key-1")
    again = await call(app, sessionmaker, caller, work, "key-1")
    assert work.calls == 1
    assert (again.status_code, again.body) == (201, first.body)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers


async def test_the_same_key_with_another_body_is_a_mismatch(
    app: FastAPI, sessionmaker: async_sessionmaker[AsyncSession], caller: Caller
) -> None:
    work = Work()
    await call(app, sessionmaker, caller, work, "key-1", body="a")
    with pytest.raises(ApiError) as raised:
        await call(app, sessionmaker, caller, work, "key-1", body="b")
    assert raised.value.code == "idempotency_mismatch"
    assert work.calls == 1


async def test_keys_are_per_user_and_environment(
    app: FastAPI, sessionmaker: async_sessionmaker[AsyncSession], caller: Caller
) -> None:
    work = Work()
    await call(app, sessionmaker, caller, work, "shared")
    sandbox = Caller(caller.user_id, caller.token_id, Environment.test, caller.plan, caller.kind, caller.tier, "abcd")
    await call(app, sessionmaker, sandbox, work, "shared", body="other")
    assert work.calls == 2


async def test_a_concurrent_duplicate_is_409_in_progress(
    app: FastAPI, sessionmaker: async_sessionmaker[AsyncSession], caller: Caller
) -> None:
    work = Work()
    work.release.clear()
    first = asyncio.create_task(call(app, sessionmaker, caller, work, "key-1"))
    await work.started.wait()
    with pytest.raises(ApiError) as raised:
        await call(app, sessionmaker, caller, work, "key-1")
    assert raised.value.code == "idempotency_in_progress"
    work.release.set()
    done = await first
    replay = await call(app, sessionmaker, caller, work, "key-1")
    assert replay.body == done.body
    assert work.calls == 1


async def test_a_failed_request_does_not_keep_its_key(
    app: FastAPI, sessionmaker: async_sessionmaker[AsyncSession], caller: Caller
) -> None:
    async def failing() -> Created:
        raise ApiError("not_found")

    with pytest.raises(ApiError):
        async with sessionmaker.begin() as session:
            await idempotency_of(app).answer(caller, session, "key-1", "f" * 64, failing)
    assert await records(sessionmaker) == 0
    work = Work()
    async with sessionmaker.begin() as session:
        response = await idempotency_of(app).answer(caller, session, "key-1", "f" * 64, work)
    assert (response.status_code, work.calls) == (200, 1)


async def test_expired_records_are_ignored_and_purged(
    app: FastAPI, sessionmaker: async_sessionmaker[AsyncSession], caller: Caller
) -> None:
    work = Work()
    await call(app, sessionmaker, caller, work, "old")
    await call(app, sessionmaker, caller, work, "fresh")
    async with sessionmaker.begin() as session:
        past = utcnow() - dt.timedelta(seconds=1)
        record = (await session.scalars(select(IdempotencyRecord).order_by(IdempotencyRecord.created_at))).first()
        assert record is not None
        record.expires_at = past
    replay = await call(app, sessionmaker, caller, work, "old")
    assert "Idempotent-Replayed" not in replay.headers
    assert work.calls == 3
    async with sessionmaker.begin() as session:  # now "fresh" is the oldest record: expire it too
        record = (await session.scalars(select(IdempotencyRecord).order_by(IdempotencyRecord.created_at))).first()
        assert record is not None
        record.expires_at = past
    async with sessionmaker.begin() as session:
        assert await idempotency.purge_expired(session, utcnow()) == 1
    assert await records(sessionmaker) == 1


async def test_an_abandoned_claim_is_taken_over_after_its_lease(
    app: FastAPI, sessionmaker: async_sessionmaker[AsyncSession], caller: Caller
) -> None:
    work = Work()
    work.release.clear()
    abandoned = asyncio.create_task(call(app, sessionmaker, caller, work, "key-1"))
    await work.started.wait()
    abandoned.cancel()
    with pytest.raises(asyncio.CancelledError):
        await abandoned
    async with sessionmaker.begin() as session:
        record = await session.scalar(select(IdempotencyRecord))
        assert record is not None
        assert record.response_status is None, "a cancelled request keeps its claim"
        record.created_at = utcnow() - idempotency.CLAIM_LEASE
    work.release.set()
    taken_over = await call(app, sessionmaker, caller, work, "key-1")
    assert taken_over.status_code == 201
    assert work.calls == 2


async def test_neither_the_key_nor_the_response_is_stored_readable(
    app: FastAPI, sessionmaker: async_sessionmaker[AsyncSession], caller: Caller
) -> None:
    response = await call(app, sessionmaker, caller, Work(), "my-readable-key")
    secret = Created.model_validate_json(bytes(response.body)).secret
    async with sessionmaker() as session:
        record = await session.scalar(select(IdempotencyRecord))
    assert record is not None
    assert record.response_body is not None
    assert secret.encode() not in record.response_body
    assert "my-readable-key" not in record.key_hash


@pytest.mark.parametrize("key", ["", "x" * 256, "é", "tab\there", "\x7f"])
def test_bad_keys_are_refused(key: str) -> None:
    with pytest.raises(ApiError) as raised:
        check_key(key)
    assert raised.value.code == "validation_failed"
    assert raised.value.errors[0].field == "header.Idempotency-Key"


@pytest.mark.parametrize("key", ["a", "x" * 255, "9f1c7e1e-4b1a-4c36-9d1e-0c2d2b8d4f11", "with space ~!"])
def test_good_keys_are_accepted(key: str) -> None:
    check_key(key)
