"""Migrations of the audit trail: 0013 fills the current verdict (the newest re-score, else the answer) and the
country of old rows, 0016 their language, 0019 admits dashboard submissions (no token, an asking user), 0021
compresses the stored verdicts."""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import orjson
import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from compliance_api.classify.compression import CURRENT_DICTIONARY, compress, decompress, dictionary_of
from compliance_api.config import Settings
from compliance_api.db import UTCDateTime, create_engine
from compliance_api.migrate import alembic_config, downgrade, upgrade
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
    await upgrade(fresh_engine, "0019")
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


async def test_0021_compresses_each_stored_verdict_as_the_very_bytes_it_held_and_back(
    fresh_engine: AsyncEngine,
) -> None:
    """The JSON text a row held (the answer as first given) comes back byte for byte after the upgrade, and after a
    downgrade too; rows are converted in batches (more than one here)."""
    await upgrade(fresh_engine, "0020")
    postgresql = fresh_engine.dialect.name == "postgresql"
    json = "CAST(:{} AS JSON)" if postgresql else ":{}"
    typed: dict[str, sa.types.TypeEngine[Any]] = {
        "id": sa.Uuid(),
        "user": sa.Uuid(),
        "of": sa.Uuid(),
        "at": UTCDateTime(),
    }
    user = uuid.uuid4()
    texts = {uuid.uuid4(): f'{{"verdict":"safe","advice":"r\\u00e9sultat {n}","score":{n}.5}}' for n in range(1001)}
    later = {uuid.uuid4(): '{"verdict": "risky",  "spaced": true}'}  # any JSON text, kept as it is
    first = next(iter(texts))

    def statement(sql: str) -> sa.TextClause:
        return sa.text(sql).bindparams(
            *(sa.bindparam(name, type_=kind) for name, kind in typed.items() if f":{name}" in sql)
        )

    async with fresh_engine.begin() as connection:
        await connection.execute(
            statement(
                "INSERT INTO user_account (id, email, kind, plan, created_at) "
                "VALUES (:id, 'm@example.com', 'business', 'free', :at)"
            ),
            {"id": user, "at": NOW},
        )
        await connection.execute(
            statement(
                "INSERT INTO classification (id, environment, user_id, token_id, kind, ruleset_id, ruleset_version, "
                "monitor, language, created_at, verdict, request, result) VALUES (:id, 'live', :user, :user, "
                f"'zelfstandigenwet', 'nl-zw', '2026-07-09', false, 'en', :at, 'safe', {json.format('request')}, "
                f"{json.format('result')})"
            ),
            [
                {"id": id, "user": user, "at": NOW, "request": '{"engagement":{}}', "result": text}
                for id, text in texts.items()
            ],
        )
        await connection.execute(
            statement(
                "INSERT INTO classification_verdict (id, classification_id, verdict, previous_verdict, "
                "ruleset_version, as_of, created_at, environment, result) VALUES (:id, :of, 'risky', 'safe', "
                f"'2026-07-09', '2026-01-02', :at, 'live', {json.format('result')})"
            ),
            [{"id": id, "of": first, "at": NOW, "result": text} for id, text in later.items()],
        )

    await upgrade(fresh_engine, "0021")
    async with fresh_engine.connect() as connection:
        stored = (await connection.execute(sa.text("SELECT id, result FROM classification"))).all()
        requests = (await connection.execute(sa.text("SELECT request FROM classification"))).scalars().all()
        stored_later = (await connection.execute(sa.text("SELECT id, result FROM classification_verdict"))).all()
    assert {uuid.UUID(str(id)): decompress(value).decode() for id, value in stored} == texts
    assert {uuid.UUID(str(id)): decompress(value).decode() for id, value in stored_later} == later
    assert {dictionary_of(value) for _, value in stored} == {CURRENT_DICTIONARY}
    assert {decompress(value) for value in requests} == {b'{"engagement":{}}'}

    await downgrade(fresh_engine, "0020")
    cast = "CAST(result AS TEXT)" if postgresql else "result"
    async with fresh_engine.connect() as connection:
        back = (await connection.execute(sa.text(f"SELECT id, {cast} FROM classification"))).all()
    assert {uuid.UUID(str(id)): text for id, text in back} == texts


async def test_0025_fills_the_listed_fields_from_each_stored_verdict(fresh_engine: AsyncEngine) -> None:
    """The original verdict and the ruleset's `valid_from`, read from each row's stored verdict (not its current,
    re-scored verdict), over more than one batch; the downgrade drops both columns."""
    await upgrade(fresh_engine, "0024")
    typed: dict[str, sa.types.TypeEngine[Any]] = {"id": sa.Uuid(), "user": sa.Uuid(), "at": UTCDateTime()}
    user = uuid.uuid4()
    verdicts = ("safe", "risky", "unsafe")
    expected = {uuid.uuid4(): (verdicts[n % 3], dt.date(2026, 1 + n % 12, 1 + n % 28)) for n in range(1001)}

    def result(verdict: str, valid_from: dt.date) -> bytes:
        ruleset = {"id": "nl-zw", "version": "2026-07-09", "valid_from": valid_from.isoformat()}
        return compress(orjson.dumps({"verdict": verdict, "ruleset": ruleset}))

    async with fresh_engine.begin() as connection:
        await connection.execute(
            sa.text(
                "INSERT INTO user_account (id, email, kind, plan, created_at) "
                "VALUES (:id, 'm@example.com', 'business', 'free', :at)"
            ).bindparams(*(sa.bindparam(name, type_=typed[name]) for name in ("id", "at"))),
            {"id": user, "at": NOW},
        )
        await connection.execute(
            sa.text(
                "INSERT INTO classification (id, environment, user_id, token_id, kind, ruleset_id, ruleset_version, "
                "monitor, language, created_at, verdict, request, result) VALUES (:id, 'live', :user, :user, "
                "'zelfstandigenwet', 'nl-zw', '2026-07-09', false, 'en', :at, 'risky', :request, :result)"
            ).bindparams(
                *(sa.bindparam(name, type_=kind) for name, kind in typed.items()),
                sa.bindparam("request", type_=sa.LargeBinary()),
                sa.bindparam("result", type_=sa.LargeBinary()),
            ),
            [
                {"id": id, "user": user, "at": NOW, "request": compress(b"{}"), "result": result(*listed)}
                for id, listed in expected.items()
            ],
        )

    await upgrade(fresh_engine, "0025")
    async with fresh_engine.connect() as connection:
        filled = await connection.execute(
            sa.text("SELECT id, original_verdict, ruleset_valid_from FROM classification").columns(
                sa.column("id", sa.Uuid()), sa.column("original_verdict"), sa.column("ruleset_valid_from", sa.Date())
            )
        )
        assert {id: (verdict, valid_from) for id, verdict, valid_from in filled} == expected

    await downgrade(fresh_engine, "0024")
    async with fresh_engine.connect() as connection:
        columns = await connection.run_sync(lambda sync: sa.inspect(sync).get_columns("classification"))
    assert {"original_verdict", "ruleset_valid_from"}.isdisjoint(column["name"] for column in columns)
