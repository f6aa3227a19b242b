"""The audit trail's direct writers store rows exactly as the engine would, one transaction per batch."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.types import TypeDecorator

from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.classify.models import Classification, ClassificationKind
from compliance_api.events.models import OutboxEvent
from compliance_api.kit.batch_writer import (
    BatchWriter,
    EngineWriter,
    PostgresWriter,
    SqliteWriter,
    _Shapes,
    batch_writer_for,
)
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.wtta.models import WttaImport


@pytest.fixture
async def writer(engine: AsyncEngine) -> AsyncIterator[BatchWriter]:
    direct = batch_writer_for(engine)
    yield direct
    await direct.close()


def user_row() -> dict[str, Any]:
    return {
        "id": uuid.uuid4(),
        "email": f"w-{uuid.uuid4().hex[:8]}@example.com",
        "kind": UserKind.business,
        "plan": Plan.free,
        "created_at": utcnow(),
    }


def classification_row(user_id: uuid.UUID) -> dict[str, Any]:
    return {
        "id": uuid.uuid4(),
        "environment": Environment.test,
        "user_id": user_id,
        "token_id": uuid.uuid4(),
        "asked_by_user_id": None,
        "request_id": "req_9c0f72a132838398f6c0d8d7",
        "kind": ClassificationKind.zelfstandigenwet,
        "ruleset_id": "nl-zw",
        "ruleset_version": "2026-01-01",
        "request": {"engagement": {"hourly_rate_eur": 37.5, "own_tools": True}},
        "result": {"verdict": "risky", "criteria": [{"id": "nl-zw-1", "hit": None}], "advice": "Ça va: €38"},
        "verdict": "risky",
        "original_verdict": "risky",
        "ruleset_valid_from": dt.date(2026, 1, 1),
        "country": None,
        "reference": "contract-1",
        "client_metadata": {"cost_centre": "IT"},
        "monitor": True,
        "language": "nl",
        "created_at": utcnow(),
    }


def table(model: Any) -> Table:
    return model.metadata.tables[model.__tablename__]  # type: ignore[no-any-return]


def columns(record: Any) -> dict[str, Any]:
    return {column.key: getattr(record, column.key) for column in type(record).__table__.columns}


async def read(sessionmaker: async_sessionmaker[AsyncSession], model: Any, row_id: uuid.UUID) -> Any:
    async with sessionmaker() as session:
        return await session.scalar(select(model).where(model.id == row_id))


def test_each_backend_gets_its_direct_writer(engine: AsyncEngine) -> None:
    expected = {"sqlite": SqliteWriter, "postgresql": PostgresWriter}[engine.url.get_backend_name()]
    assert isinstance(batch_writer_for(engine), expected)
    assert isinstance(batch_writer_for(create_async_engine("sqlite+aiosqlite:///:memory:")), EngineWriter)


async def test_rows_read_back_exactly_as_the_engine_writes_them(
    engine: AsyncEngine, writer: BatchWriter, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    user = user_row()
    await EngineWriter(engine).write({table(User): [user]})
    direct = classification_row(user["id"])
    reference = {**direct, "id": uuid.uuid4()}
    await writer.write({table(Classification): [direct]})
    await EngineWriter(engine).write({table(Classification): [reference]})

    stored, expected = (
        await read(sessionmaker, Classification, direct["id"]),
        await read(sessionmaker, Classification, reference["id"]),
    )
    assert {**columns(stored), "id": None} == {**columns(expected), "id": None}
    assert columns(stored) == {**direct, "kind": ClassificationKind.zelfstandigenwet}
    assert stored.created_at.tzinfo is not None


async def test_a_missing_column_gets_its_python_default(
    writer: BatchWriter, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    before = utcnow()
    await writer.write({table(OutboxEvent): [{"environment": Environment.live, "type": "t.x", "payload": {}}]})
    async with sessionmaker() as session:
        event = await session.scalar(select(OutboxEvent).where(OutboxEvent.type == "t.x"))
    assert event is not None
    assert isinstance(event.id, uuid.UUID)
    assert event.created_at >= before
    assert event.delivered_at is None


async def test_parents_and_children_commit_in_one_batch_or_not_at_all(
    writer: BatchWriter, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    parent = user_row()
    child = classification_row(parent["id"])
    await writer.write({table(User): [parent], table(Classification): [child]})
    assert await read(sessionmaker, Classification, child["id"]) is not None

    orphan_parent, orphan = user_row(), classification_row(uuid.uuid4())  # references no user
    with pytest.raises(IntegrityError):
        await writer.write({table(User): [orphan_parent], table(Classification): [orphan]})
    assert await read(sessionmaker, User, orphan_parent["id"]) is None

    await writer.write({table(User): [user_row()]})  # the writer is usable after a failed batch


async def test_a_value_its_column_cannot_bind_is_a_statement_error(writer: BatchWriter) -> None:
    with pytest.raises(StatementError):
        await writer.write({table(User): [{**user_row(), "created_at": "yesterday"}]})


async def test_a_value_the_database_driver_refuses_fails_its_batch_only(
    writer: BatchWriter, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    """An integer past 64 bits passes SQLAlchemy's binding but not the driver's; the transaction (on SQLite, the
    database's write lock) must not stay held."""
    first = user_row()
    too_big = {
        "environment": Environment.live,
        "location": "x.csv",
        "source": "x",
        "full": False,
        "finished_at": utcnow(),
        "rows_read": 2**70,
    }
    with pytest.raises(Exception):  # noqa: B017, PT011 (each driver names it its own way)
        await writer.write({table(User): [first], table(WttaImport): [too_big]})
    assert await read(sessionmaker, User, first["id"]) is None

    after = user_row()
    await writer.write({table(User): [after]})
    assert await read(sessionmaker, User, after["id"]) is not None


class Counted(TypeDecorator[str]):
    """A type whose bind processor counts its calls."""

    impl = String
    cache_ok = True
    calls = 0

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        Counted.calls += 1
        return None if value is None else value.upper()


def test_a_batch_is_bound_with_one_processor_call_per_processed_value_and_defaults_only_where_missing() -> None:
    """The batch's preparation runs on the event loop: per value, only the work its column needs."""
    made = iter(range(100, 200))
    table = Table(
        "shaped",
        MetaData(),
        Column("id", Integer, primary_key=True, default=lambda: next(made)),
        Column("name", String),
        Column("tag", Counted),
    )
    Counted.calls = 0
    rows: list[dict[str, Any]] = [
        {"id": 1, "name": "a", "tag": "x"},
        {"id": 2, "name": "b", "tag": "y"},
        {"name": "c", "tag": "z"},
    ]
    grouped = _Shapes(sqlite.dialect()).group({table: rows})
    assert [(shape.columns, values) for shape, values in grouped] == [
        (("id", "name", "tag"), [[1, "a", "X"], [2, "b", "Y"]]),
        (("id", "name", "tag"), [[100, "c", "Z"]]),
    ]
    assert Counted.calls == 3
