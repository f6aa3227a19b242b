"""Migrations of the audit trail: 0013 fills the current verdict and country of old rows, 0016 their language, 0019
admits dashboard submissions (no token, an asking user)."""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from compliance_api.config import Settings
from compliance_api.db import UTCDateTime, create_engine
from compliance_api.migrate import alembic_config, upgrade
from tests.conftest import require_service

POSTGRES_SERVER = os.environ.get("TEST_POSTGRES_SERVER", "postgresql://postgres@127.0.0.1:5432")
NOW = dt.datetime(2026, 11, 25, 6, tzinfo=dt.UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
async def fresh_engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """An empty database of each backend, for migrating step by step."""
    if request.param == "sqlite":
        engine = create_engine(Settings(database_url=f"sqlite:///{tmp_path / 'm.db'}").resolved_database_url)
        yield engine
        await engine.dispose()
        return
    name = f"migration_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        admin = await asyncpg.connect(POSTGRES_SERVER + "/postgres")
    except OSError:
        require_service(False, "PostgreSQL at " + POSTGRES_SERVER)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        engine = create_engine(Settings(database_url=f"{POSTGRES_SERVER}/{name}").resolved_database_url)
        try:
            yield engine
        finally:
            await engine.dispose()
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def test_0013_fills_verdict_and_country_from_answers_and_history(fresh_engine: AsyncEngine) -> None:
    await upgrade(fresh_engine, "0012")
    user, dutch, german = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    ids = ("id", "user_id", "token_id", "classification_id")
    stamps = ("created_at",)

    def table(name: str, *columns: str) -> sa.TableClause:
        """The table as it is at revision 0012 (the models describe the newest schema)."""
        types = {c: sa.Uuid() if c in ids else UTCDateTime() if c in stamps else None for c in columns}
        json_columns = {"request", "result"}
        return sa.table(name, *(sa.column(c, sa.JSON() if c in json_columns else types[c]) for c in columns))

    users = table("user_account", "id", "email", "kind", "plan", "created_at")
    classification = table(
        "classification",
        "id",
        "environment",
        "user_id",
        "token_id",
        "kind",
        "ruleset_id",
        "ruleset_version",
        "monitor",
        "created_at",
        "request",
        "result",
    )
    verdicts = table(
        "classification_verdict",
        "id",
        "classification_id",
        "verdict",
        "previous_verdict",
        "ruleset_version",
        "as_of",
        "created_at",
        "environment",
        "result",
    )
    async with fresh_engine.begin() as connection:
        await connection.execute(
            sa.insert(users),
            [{"id": user, "email": "m@example.com", "kind": "business", "plan": "free", "created_at": NOW}],
        )
        rows = [
            (dutch, "zelfstandigenwet", {"engagement": {}}, "safe"),
            (german, "cross_border", {"country": "DE", "criteria": {}}, "risky"),
        ]
        await connection.execute(
            sa.insert(classification),
            [
                {
                    "id": id,
                    "environment": "live",
                    "user_id": user,
                    "token_id": uuid.uuid4(),
                    "kind": kind,
                    "ruleset_id": "x",
                    "ruleset_version": "2026-07-09",
                    "monitor": True,
                    "created_at": NOW,
                    "request": request,
                    "result": {"verdict": verdict},
                }
                for id, kind, request, verdict in rows
            ],
        )
        await connection.execute(
            sa.insert(verdicts),
            [
                {
                    "id": uuid.uuid4(),
                    "classification_id": dutch,
                    "verdict": verdict,
                    "previous_verdict": "safe",
                    "ruleset_version": "2026-07-09",
                    "as_of": dt.date(2026, 1, day),
                    "environment": "live",
                    "created_at": NOW + dt.timedelta(days=day),
                    "result": {"verdict": verdict},
                }
                for day, verdict in ((1, "unsafe"), (2, "risky"))
            ],
        )
    await upgrade(fresh_engine)
    async with fresh_engine.connect() as connection:
        found = await connection.execute(sa.text("SELECT id, verdict, country FROM classification"))
        by_id = {uuid.UUID(str(row.id)): (row.verdict, row.country) for row in found}
    assert by_id == {dutch: ("risky", None), german: ("risky", "DE")}


async def test_0016_marks_earlier_verdicts_as_english(fresh_engine: AsyncEngine) -> None:
    """Every verdict before languages was written in English; the column says so for the old rows."""
    await upgrade(fresh_engine, "0015")
    user, old = uuid.uuid4(), uuid.uuid4()
    async with fresh_engine.begin() as connection:
        await connection.execute(
            sa.table(
                "user_account",
                sa.column("id", sa.Uuid()),
                *(sa.column(c) for c in ("email", "kind", "plan")),
                sa.column("created_at", UTCDateTime()),
            ).insert(),
            [{"id": user, "email": "l@example.com", "kind": "business", "plan": "free", "created_at": NOW}],
        )
        columns = ("id", "environment", "user_id", "token_id", "kind", "ruleset_id", "ruleset_version", "verdict")
        await connection.execute(
            sa.table(
                "classification",
                *(sa.column(c, sa.Uuid() if c.endswith("id") and c != "ruleset_id" else None) for c in columns),
                sa.column("created_at", UTCDateTime()),
                sa.column("request", sa.JSON()),
                sa.column("result", sa.JSON()),
            ).insert(),
            [
                {
                    "id": old,
                    "environment": "live",
                    "user_id": user,
                    "token_id": uuid.uuid4(),
                    "kind": "zelfstandigenwet",
                    "ruleset_id": "nl-zw",
                    "ruleset_version": "2026-07-09",
                    "verdict": "safe",
                    "created_at": NOW,
                    "request": {"engagement": {}},
                    "result": {"verdict": "safe"},
                }
            ],
        )
    await upgrade(fresh_engine)
    async with fresh_engine.connect() as connection:
        [(language,)] = (await connection.execute(sa.text("SELECT language FROM classification"))).all()
    assert language == "en"


def _downgrade(connection: Connection, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.downgrade(config, revision)


async def test_0019_keeps_a_dashboard_submission_and_refuses_a_downgrade_that_would_lose_it(
    fresh_engine: AsyncEngine,
) -> None:
    """A tokenless row with its asker; deleting the asker empties the column and keeps the record; going back to
    0018 (token_id required) stops instead of deleting it."""
    await upgrade(fresh_engine)
    owner, asker, submitted = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    users = sa.table(
        "user_account",
        sa.column("id", sa.Uuid()),
        *(sa.column(c) for c in ("email", "kind", "plan")),
        sa.column("created_at", UTCDateTime()),
    )
    async with fresh_engine.begin() as connection:
        await connection.execute(
            users.insert(),
            [
                {"id": id, "email": f"{id.hex}@example.com", "kind": "business", "plan": "free", "created_at": NOW}
                for id in (owner, asker)
            ],
        )
        columns = ("id", "environment", "user_id", "asked_by_user_id", "kind", "ruleset_id", "ruleset_version")
        await connection.execute(
            sa.table(
                "classification",
                *(sa.column(c, sa.Uuid() if c.endswith("user_id") or c == "id" else None) for c in columns),
                sa.column("verdict"),
                sa.column("created_at", UTCDateTime()),
                sa.column("request", sa.JSON()),
                sa.column("result", sa.JSON()),
            ).insert(),
            [
                {
                    "id": submitted,
                    "environment": "live",
                    "user_id": owner,
                    "asked_by_user_id": asker,
                    "kind": "zelfstandigenwet",
                    "ruleset_id": "nl-zw",
                    "ruleset_version": "2026-07-09",
                    "verdict": "safe",
                    "created_at": NOW,
                    "request": {"engagement": {}},
                    "result": {"verdict": "safe"},
                }
            ],
        )
        await connection.execute(sa.delete(users).where(users.c.id == asker))
    async with fresh_engine.connect() as connection:
        found = (await connection.execute(sa.text("SELECT token_id, asked_by_user_id FROM classification"))).all()
    assert [tuple(row) for row in found] == [(None, None)]
    with pytest.raises(RuntimeError, match="1 classifications were submitted from the dashboard"):
        async with fresh_engine.begin() as connection:
            await connection.run_sync(_downgrade, "0018")
    async with fresh_engine.connect() as connection:
        assert await connection.scalar(sa.text("SELECT count(*) FROM classification")) == 1
