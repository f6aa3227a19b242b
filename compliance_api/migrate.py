"""Bring a database to the newest schema with Alembic, from the CLI, at start, or in tests."""

from __future__ import annotations

from importlib import resources

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(resources.files("compliance_api").joinpath("migrations")))
    return config


def _upgrade(connection: Connection, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade, revision)


def _downgrade(connection: Connection, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.downgrade(config, revision)


async def downgrade(engine: AsyncEngine, revision: str) -> None:
    """Back to `revision` (tests check that each migration can be undone)."""
    async with engine.begin() as connection:
        await connection.run_sync(_downgrade, revision)
