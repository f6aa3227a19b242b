"""Migration 0022 adds the index the worker's claims find due test events by, and its downgrade drops it."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from compliance_api.migrate import downgrade, upgrade
from tests.classify.test_migrations import fresh_engine  # noqa: F401  (the fixture, registered here by the import)

INDEX = "ix_webhook_delivery_due_type"


async def _indexes(engine: AsyncEngine) -> dict[str, list[str | None]]:
    async with engine.connect() as connection:
        found = await connection.run_sync(lambda sync: sa.inspect(sync).get_indexes("webhook_delivery"))
    return {index["name"]: list(index["column_names"]) for index in found if index["name"]}


async def test_0022_indexes_due_deliveries_by_type_and_is_undone(fresh_engine: AsyncEngine) -> None:  # noqa: F811
    await upgrade(fresh_engine)
    assert (await _indexes(fresh_engine))[INDEX] == ["status", "event_type", "next_attempt_at"]
    await downgrade(fresh_engine, "0021")
    assert INDEX not in await _indexes(fresh_engine)
