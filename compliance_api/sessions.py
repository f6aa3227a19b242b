"""A request's database transaction: the one place where it begins and ends.

Three kinds of request reach the database. Most take `DbSession`: one session, committed once after the handler
returns (before the response is sent) and rolled back on any error. The hot routes (classify, the passport reads,
the WTTA lookup, rate benchmarks) usually need no session at all, so they open one only when they must, with
`transaction(request)`, which commits on leaving the block. A route that only reads takes `ReadSession`, never
committed. Endpoints never open sessions of their own.

No task holds one connection while it waits for a second: with every request of a flood holding its first connection
and waiting for another, the pool runs dry and every tenant waits for it. `OneConnectionPerTask`, the class of the
app's sessions, refuses a session that begins on a connection while another session of the same task holds one.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session, SessionTransaction
from starlette.requests import HTTPConnection

from compliance_api.kit.registry import Slot, collaborator

SESSIONMAKER = Slot[async_sessionmaker[AsyncSession]]("sessionmaker")


def sessionmaker_of(connection: HTTPConnection) -> async_sessionmaker[AsyncSession]:
    return collaborator(connection, SESSIONMAKER)


async def _request_session(connection: HTTPConnection) -> AsyncIterator[AsyncSession]:
    """One session per request; committed once after the endpoint returns, rolled back on any error."""
    async with sessionmaker_of(connection)() as session:  # closing without a commit rolls back
        yield session
        await session.commit()


# scope="function": commit before the response is sent, so a failed commit is answered as an error, never a 200.
DbSession = Annotated[AsyncSession, Depends(_request_session, scope="function")]


async def _read_session(connection: HTTPConnection) -> AsyncIterator[AsyncSession]:
    """One session per request that only reads, never committed. On PostgreSQL its connection is in autocommit
    mode: the statements run without `BEGIN` and `ROLLBACK`, each a round trip (a read needs no transaction; the
    isolation level is reset when the connection goes back to the pool; a session bound to a connection already in a
    transaction keeps it). SQLite's driver begins no transaction for a
    read anyway, and setting the mode would cost a thread hand-off each way."""
    async with sessionmaker_of(connection)() as session:
        if isinstance(session.bind, AsyncEngine) and session.bind.dialect.name == "postgresql":
            await session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
        yield session


ReadSession = Annotated[AsyncSession, Depends(_read_session, scope="function")]
"""For a route that only reads: a commit would be a round trip (a thread hand-off on SQLite) for nothing."""


@asynccontextmanager
async def transaction(connection: HTTPConnection) -> AsyncIterator[AsyncSession]:
    """A transaction for a hot route that needs the database only sometimes: committed on leaving the block, rolled
    back on an error."""
    async with sessionmaker_of(connection).begin() as session:
        yield session


class NestedSession(RuntimeError):
    """A session began on a connection while another session of the same task held one: a bug (see the module)."""


class OneConnectionPerTask(Session):
    """The app's sessions: each task holds at most one connection at a time (`NestedSession` otherwise)."""


_HOLDING: weakref.WeakKeyDictionary[asyncio.Task[Any], weakref.WeakSet[Session]] = weakref.WeakKeyDictionary()
"""Per task, its sessions that hold a connection now."""
_HOLDER: weakref.WeakKeyDictionary[Session, asyncio.Task[Any]] = weakref.WeakKeyDictionary()
"""Per session holding a connection, its task (a session may end in another task: `AsyncSession.close` is shielded)."""


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no event loop: a synchronous use, outside any request
        return None


@event.listens_for(OneConnectionPerTask, "after_begin")
def _began(session: Session, _transaction: SessionTransaction, _connection: Any) -> None:
    task = _current_task()
    if task is None:
        return
    holding = _HOLDING.setdefault(task, weakref.WeakSet())
    if any(other is not session for other in holding):
        raise NestedSession(
            "a session began while another session of this task holds a connection; use the request's session"
        )
    holding.add(session)
    _HOLDER[session] = task


@event.listens_for(OneConnectionPerTask, "after_transaction_end")
def _ended(session: Session, ended: SessionTransaction) -> None:
    if ended.parent is None and (task := _HOLDER.pop(session, None)) is not None:
        _HOLDING.get(task, weakref.WeakSet()).discard(session)
