"""Migration 0014 gives the events already in the outbox their owner, from the payload field their type names."""

from __future__ import annotations

import datetime as dt
import uuid

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from compliance_api.db import UTCDateTime
from compliance_api.migrate import upgrade
from tests.classify.test_migrations import fresh_engine  # noqa: F401  (the fixture, registered here by the import)

NOW = dt.datetime(2026, 11, 25, 6, tzinfo=dt.UTC)


async def test_0014_fills_the_owner_of_owner_routed_events_only(fresh_engine: AsyncEngine) -> None:  # noqa: F811
    await upgrade(fresh_engine, "0013")
    anna, bob = uuid.uuid4(), uuid.uuid4()
    outbox = sa.table(
        "outbox_event",
        sa.column("id", sa.Uuid()),
        sa.column("environment"),
        sa.column("type"),
        sa.column("payload", sa.JSON()),
        sa.column("created_at", UTCDateTime()),
    )
    rows = {
        uuid.uuid4(): ("passport.updated", {"freelancer_id": str(anna)}, anna),
        uuid.uuid4(): ("api_token.created", {"user_id": str(bob), "token_id": str(uuid.uuid4())}, bob),
        uuid.uuid4(): ("wtta.admission.updated", {"kvk_number": "12345678"}, None),
    }
    async with fresh_engine.begin() as connection:
        await connection.execute(
            sa.insert(outbox),
            [
                {"id": id, "environment": "live", "type": type, "payload": payload, "created_at": NOW}
                for id, (type, payload, _) in rows.items()
            ],
        )
    await upgrade(fresh_engine)
    owners = sa.table("outbox_event", sa.column("id", sa.Uuid()), sa.column("owner_id", sa.Uuid()))
    async with fresh_engine.connect() as connection:
        found = {row.id: row.owner_id for row in await connection.execute(sa.select(owners))}
    assert found == {id: owner for id, (_, _, owner) in rows.items()}
