"""The idempotency records' statements. The rules that call them live in `service.py`."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.idempotency.models import IdempotencyRecord
from compliance_api.kit.environment import Environment


async def record_of(
    session: AsyncSession, user_id: uuid.UUID, environment: Environment, key_hash: str
) -> IdempotencyRecord | None:
    return await session.scalar(
        select(IdempotencyRecord).where(
            IdempotencyRecord.user_id == user_id,
            IdempotencyRecord.environment == environment,
            IdempotencyRecord.key_hash == key_hash,
        )
    )


async def remove(session: AsyncSession, record: IdempotencyRecord) -> None:
    await session.delete(record)
    await session.flush()


def add(session: AsyncSession, record: IdempotencyRecord) -> None:
    session.add(record)


async def release(session: AsyncSession, claim_id: uuid.UUID) -> None:
    await session.execute(delete(IdempotencyRecord).where(IdempotencyRecord.id == claim_id))


async def store_answer(session: AsyncSession, record_id: uuid.UUID, status: int, sealed: bytes) -> None:
    await session.execute(
        update(IdempotencyRecord)
        .where(IdempotencyRecord.id == record_id)
        .values(response_status=status, response_body=sealed)
    )


async def purge_expired(session: AsyncSession, now: dt.datetime) -> int:
    """Delete records expired by `now`; returns how many."""
    result = await session.execute(delete(IdempotencyRecord).where(IdempotencyRecord.expires_at <= now))
    return int(result.rowcount)  # type: ignore[attr-defined]
