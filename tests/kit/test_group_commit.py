"""Group commit: concurrent inserts share transactions, each caller returns only once its row is committed."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.kit.batch_writer import batch_writer_for
from compliance_api.kit.clock import utcnow
from compliance_api.kit.group_commit import GroupCommit


def user_row(email: str) -> tuple[type[User], dict[str, Any]]:
    row = {"id": uuid.uuid4(), "email": email, "kind": UserKind.business, "plan": Plan.free, "created_at": utcnow()}
    return User, row


async def count_users(sessionmaker: async_sessionmaker[AsyncSession]) -> int:
    async with sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(User)) or 0)


async def test_concurrent_inserts_are_all_committed_before_their_callers_return(
    engine: AsyncEngine, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    writer = GroupCommit(batch_writer_for(engine), max_batch=50)
    committed: list[int] = []

    async def insert(index: int) -> None:
        await writer.insert(user_row(f"u{index}@example.com"))
        committed.append(await count_users(sessionmaker))

    try:
        await asyncio.gather(*(insert(i) for i in range(200)))
    finally:
        await writer.close()
    assert await count_users(sessionmaker) == 200
    assert min(committed) >= 1  # every caller saw at least its own row committed


async def test_a_bad_row_fails_alone(audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    writer = audit
    await writer.insert(user_row("taken@example.com"))
    rows = [user_row(f"ok{i}@example.com") for i in range(10)]
    rows.insert(5, user_row("taken@example.com"))
    results = await asyncio.gather(*(writer.insert(row) for row in rows), return_exceptions=True)
    failures = [result for result in results if isinstance(result, BaseException)]
    assert len(failures) == 1
    assert isinstance(failures[0], IntegrityError)
    assert results[5] is failures[0]
    assert await count_users(sessionmaker) == 11


async def test_a_broken_insert_reaches_every_waiter_and_the_writer_survives(
    engine: AsyncEngine, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    """A non-integrity failure (here a value the column cannot bind) fails the whole batch it arrived in."""
    writer = GroupCommit(batch_writer_for(engine))
    broken = (User, {**user_row("x@example.com")[1], "id": "not-a-uuid"})
    results = await asyncio.gather(
        writer.insert(broken), writer.insert(user_row("same-batch@example.com")), return_exceptions=True
    )
    assert all(isinstance(result, StatementError) for result in results)
    await writer.insert(user_row("after@example.com"))
    await writer.close()
    assert await count_users(sessionmaker) == 1


async def test_one_callers_rows_in_several_tables_commit_together_or_not_at_all(
    audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    """A caller's rows share its fate: a duplicate in one table keeps its other rows out too."""
    writer = audit
    first, second = user_row("pair-a@example.com"), user_row("pair-b@example.com")
    await writer.insert(first, second)
    assert await count_users(sessionmaker) == 2
    results = await asyncio.gather(
        writer.insert(user_row("fresh@example.com"), user_row("pair-a@example.com")),
        writer.insert(user_row("other@example.com")),
        return_exceptions=True,
    )
    assert isinstance(results[0], IntegrityError)
    assert results[1] is None
    async with sessionmaker() as session:
        emails = set(await session.scalars(select(User.email)))
    assert emails == {"pair-a@example.com", "pair-b@example.com", "other@example.com"}
