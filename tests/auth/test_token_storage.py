"""Tokens exist only with the person who received them: the database holds a keyed hash and the last four."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.auth import service as auth_service
from compliance_api.kit.environment import Environment
from compliance_api.models import Base
from tests.factories import create_token, create_user


async def dump_database(sessionmaker: async_sessionmaker[AsyncSession]) -> str:
    """Every value of every row of every table, as text."""
    chunks: list[str] = []
    async with sessionmaker() as session:
        for table in Base.metadata.sorted_tables:
            for row in (await session.execute(select(table))).all():
                chunks.extend(str(value) for value in row)
    return "\n".join(chunks)


async def test_database_holds_no_part_of_a_token_beyond_its_last_four(
    sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    user = await create_user(sessionmaker)
    issued = [
        (await create_token(sessionmaker, pepper, user=user, environment=environment))[1]
        for environment in (Environment.live, Environment.test, Environment.live)
    ]
    dump = await dump_database(sessionmaker)
    for token in issued:
        secret_part = token[len("sk_live_") : -4]
        windows = {secret_part[i : i + 5] for i in range(len(secret_part) - 4)}
        leaked = [w for w in windows if w in dump]
        assert leaked == [], f"token fragments found in the database: {leaked}"
        assert token[-4:] in dump


async def test_listing_shows_last_four_and_status_only(
    sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    row, token = await create_token(sessionmaker, pepper, name="payroll")
    async with sessionmaker() as session:
        listed = await auth_service.list_for_user(session, user_id=row.user_id)
    assert [(t.name, t.last4, t.status) for t in listed] == [("payroll", token[-4:], "active")]


async def test_sandbox_rows_cannot_be_read_from_production(
    sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    row, _ = await create_token(sessionmaker, pepper, environment=Environment.test)
    async with sessionmaker() as session:
        assert (await auth_service.get(session, token_id=row.id, environment=Environment.test)).id == row.id
        try:
            await auth_service.get(session, token_id=row.id, environment=Environment.live)
        except auth_service.TokenNotFound:
            pass
        else:
            raise AssertionError("a sandbox token was read from production")
        assert await auth_service.list_for_user(session, user_id=row.user_id, environment=Environment.live) == []
