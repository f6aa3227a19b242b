"""One database connection for a whole test, rolled back at its end: the test's sessions, the app's sessions and the
app's group commit all work on it, so nothing a test writes outlives it and nothing is committed (SQLAlchemy's "join
an external transaction" recipe, extended to an app that runs requests and background writes concurrently).

Each session (and each group-commit write) joins the connection's transaction with a savepoint. Two tasks' savepoints
interleaved on one connection would release each other's, so the connection is taken in turns: a task takes the turn
when it opens its first savepoint and gives it back when its last one is released or rolled back. A task that holds
the turn opens further savepoints at once (a request's session, then its audit rows).

The app's group commit writes each caller's rows in the caller's own task, within its turn, instead of in a
background writer: a writer task would wait for a turn that the request holding its session never gives back while
it waits for the writer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event, insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import ReleaseSavepointClause, RollbackToSavepointClause
from sqlalchemy.util import await_only

from compliance_api.kit.batch_writer import Batch
from compliance_api.kit.group_commit import GroupCommit, TableRow

TURN_WAIT_SECONDS = 20.0
"""How long a task waits for the connection before the test is told it needs a connection of its own."""
NEEDS_COMMITS = (
    "waited {seconds:.0f} s for the test's shared connection, which another task holds while it waits for this one: "
    "mark the test `@commits` (tests/conftest.py) so that the app commits on connections of its own"
)


class WaitedTooLong(RuntimeError):
    """A task could not have the shared connection: the test needs connections that commit (`@commits`)."""


@dataclass
class Turns:
    """Whose turn it is on the shared connection: one task's savepoints at a time, re-entrant for that task."""

    wait_seconds: float = TURN_WAIT_SECONDS
    waited_too_long: list[str] = field(default_factory=list)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _holder: asyncio.Task[Any] | None = None
    _depth: int = 0

    async def take(self) -> None:
        task = asyncio.current_task()
        if task is not None and task is self._holder:
            self._depth += 1
            return
        try:
            async with asyncio.timeout(self.wait_seconds):
                await self._lock.acquire()
        except TimeoutError:
            message = NEEDS_COMMITS.format(seconds=self.wait_seconds)
            self.waited_too_long.append(message)
            raise WaitedTooLong(message) from None
        self._holder, self._depth = task, 1

    def give_back(self) -> None:
        """One savepoint ended (released or rolled back), in whichever task ends it."""
        self._depth -= 1
        if self._depth == 0:
            self._holder = None
            self._lock.release()


@dataclass(frozen=True)
class SharedConnection:
    connection: AsyncConnection
    turns: Turns

    def sessionmaker(self, session_class: type[Session] = Session) -> async_sessionmaker[AsyncSession]:
        """Sessions whose commits release a savepoint of the test's transaction."""
        return async_sessionmaker(
            bind=self.connection,
            expire_on_commit=False,
            join_transaction_mode="create_savepoint",
            sync_session_class=session_class,
        )

    def group_commit(self) -> GroupCommit:
        return InCallersTask(ConnectionWriter(self.connection))


@contextlib.asynccontextmanager
async def shared_connection(engine: AsyncEngine) -> AsyncIterator[SharedConnection]:
    """The connection, inside a transaction rolled back on leaving (SQLite's driver must begin it explicitly)."""
    turns = Turns()
    _take_turns(engine, turns)
    async with engine.connect() as connection:
        outer = await connection.begin()
        try:
            yield SharedConnection(connection, turns)
        finally:
            await outer.rollback()


def _take_turns(engine: AsyncEngine, turns: Turns) -> None:
    @event.listens_for(engine.sync_engine, "savepoint")
    def _savepoint(_connection: object, _name: str | None) -> None:
        await_only(turns.take())  # the event runs in SQLAlchemy's greenlet, inside the awaiting task

    @event.listens_for(engine.sync_engine, "after_execute")
    def _ended(_connection: object, clause: object, *_: object) -> None:
        if isinstance(clause, (ReleaseSavepointClause, RollbackToSavepointClause)):
            turns.give_back()


class ConnectionWriter:
    """The group commit's writer on the shared connection: a batch is a savepoint of the test's transaction."""

    def __init__(self, connection: AsyncConnection) -> None:
        self._connection = connection

    async def write(self, batch: Batch) -> None:
        async with self._connection.begin_nested():
            for table, rows in batch.items():
                await self._connection.execute(insert(table), list(rows))

    async def close(self) -> None:
        return None


class InCallersTask(GroupCommit):
    """A group commit that writes each caller's rows at once, in the caller's task (see the module)."""

    async def insert(self, *rows: TableRow) -> None:
        written: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with contextlib.suppress(IntegrityError):  # a batch of one hands its integrity error to its waiter too
            await self._commit([(rows, written)])
        await written
