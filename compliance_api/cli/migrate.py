from __future__ import annotations

import asyncio

import typer

from compliance_api.config import Settings
from compliance_api.db import create_engine
from compliance_api.migrate import upgrade


async def migrate_database(settings: Settings) -> None:
    if settings.is_sqlite:
        settings.var_dir.mkdir(parents=True, exist_ok=True)
    engine = create_engine(settings.resolved_database_url)
    try:
        await upgrade(engine)
    finally:
        await engine.dispose()


def migrate() -> None:
    """Bring the database to the newest schema."""
    asyncio.run(migrate_database(Settings()))
    typer.echo("database is at the newest schema", err=True)
