"""The rolled-back connection the tests share (tests/shared_connection.py): tasks take it in turns (the app's group
commit writes in the caller's task: every HTTP test shows it), and a task that cannot have it is told to mark the
test `@commits`."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.shared_connection import SharedConnection, Turns, WaitedTooLong


async def test_two_tasks_sessions_take_the_connection_in_turns(
    shared: SharedConnection, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    """The second task's session begins only once the first one's transaction has ended."""
    order: list[str] = []
    first_holds = asyncio.Event()

    async def first() -> None:
        async with sessionmaker() as session:
            await session.execute(select(1))
            order.append("first began")
            first_holds.set()
            await asyncio.sleep(0)  # give the second task every chance to cut in
            order.append("first ends")

    async def second() -> None:
        await first_holds.wait()
        async with sessionmaker() as session:
            await session.execute(select(1))
            order.append("second began")

    await asyncio.gather(first(), second())
    assert order == ["first began", "first ends", "second began"]


async def test_a_task_that_waits_too_long_is_told_to_mark_the_test() -> None:
    turns = Turns(wait_seconds=0.01)
    await turns.take()
    with pytest.raises(WaitedTooLong, match="@commits"):
        await asyncio.create_task(turns.take())
    assert turns.waited_too_long, "the fixture fails the test with this message"
    turns.give_back()
