from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.environment import Environment

Maker = async_sessionmaker[AsyncSession]


async def test_emit_writes_one_outbox_row_in_the_callers_transaction(sessionmaker: Maker) -> None:
    async with sessionmaker() as session:
        await events.emit(
            session, environment=Environment.test, type=EventName.WTTA_ADMISSION_UPDATED, payload={"a": 1}
        )
        await session.rollback()
    async with sessionmaker.begin() as session:
        event_id = await events.emit(
            session, environment=Environment.test, type=EventName.WTTA_ADMISSION_UPDATED, payload={"a": 1}
        )
    async with sessionmaker() as session:
        assert [(e.id, e.payload) for e in await events.pending(session, environment=Environment.test)] == [
            (event_id, {"a": 1})
        ]
        assert await events.pending(session, environment=Environment.live) == []
