from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from compliance_api.config import Settings


async def migrate_database(settings: Settings) -> None:
    from compliance_api.db import create_engine
    from compliance_api.migrate import upgrade

    if settings.is_sqlite:
        settings.var_dir.mkdir(parents=True, exist_ok=True)
    engine = create_engine(settings.resolved_database_url)
    try:
        await upgrade(engine)
    finally:
        await engine.dispose()


def migrate() -> None:
    """Bring the database to the newest schema."""
    from compliance_api.config import Settings

    asyncio.run(migrate_database(Settings()))
    typer.echo("database is at the newest schema", err=True)
