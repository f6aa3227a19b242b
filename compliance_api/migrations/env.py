"""Alembic environment: runs on a connection handed in by `compliance_api.migrate`, or on DATABASE_URL."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from compliance_api.config import Settings
from compliance_api.db import create_engine
from compliance_api.models import Base

target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_on_url() -> None:
    engine = create_engine(Settings().resolved_database_url)
    async with engine.begin() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


connection = context.config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    asyncio.run(_run_on_url())
