"""The DAC7 identity migration seals the TINs already stored (the plain column goes) and is undone."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from compliance_api.migrate import downgrade, upgrade
from tests.classify.test_migrations import fresh_engine  # noqa: F401  (the fixture, registered here by the import)
from tests.conftest import SECRET
from tests.dac7.conftest import TEST_BOX

BEFORE = "0022"
NOW = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)


async def _columns(engine: AsyncEngine, table: str) -> set[str]:
    async with engine.connect() as connection:
        found = await connection.run_sync(lambda sync: sa.inspect(sync).get_columns(table))
    return {column["name"] for column in found}


async def test_the_stored_tins_are_sealed_and_the_plain_column_dropped(
    fresh_engine: AsyncEngine,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPLIANCE_SECRET_KEY", SECRET)  # the migration seals with the deployment's secret
    await upgrade(fresh_engine, BEFORE)
    user_id, seller_id = uuid.uuid4(), uuid.uuid4()
    users = sa.table(
        "user_account", *(sa.column(n) for n in ("email", "kind", "plan")), sa.column("id", sa.Uuid()),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )  # fmt: skip
    sellers = sa.table(
        "dac7_seller", *(sa.column(n) for n in ("tin", "member_state", "tin_rule", "environment")),
        sa.column("id", sa.Uuid()), sa.column("user_id", sa.Uuid()),
        sa.column("created_at", sa.DateTime(timezone=True)), sa.column("updated_at", sa.DateTime(timezone=True)),
    )  # fmt: skip
    async with fresh_engine.begin() as connection:
        await connection.execute(
            users.insert().values(id=user_id, email="sara@example.com", kind="freelancer", plan="free", created_at=NOW)
        )
        await connection.execute(
            sellers.insert().values(
                id=seller_id,
                user_id=user_id,
                tin="111222333",
                member_state="NL",
                tin_rule="stdnum.nl.bsn",
                created_at=NOW,
                updated_at=NOW,
                environment="live",
            )
        )
    await upgrade(fresh_engine)
    assert {"tin", "tin_rule"}.isdisjoint(await _columns(fresh_engine, "dac7_seller"))
    async with fresh_engine.connect() as connection:
        sealed = (await connection.execute(sa.text("SELECT identity_sealed, kind FROM dac7_seller"))).one()
    assert b"111222333" not in sealed[0]
    identity = TEST_BOX.open(bytes(sealed[0]), seller_id)
    assert [(t.tin, t.issued_by) for t in identity.tins] == [("111222333", "NL")]
    assert identity.missing() == ["first_name", "last_name", "date_of_birth", "address"]
    assert sealed[1] == "individual"
    await downgrade(fresh_engine, BEFORE)
    assert {"tin", "tin_rule"} <= await _columns(fresh_engine, "dac7_seller")
    assert "dac7_operator" not in await _tables(fresh_engine)


async def _tables(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as connection:
        return set(await connection.run_sync(lambda sync: sa.inspect(sync).get_table_names()))
