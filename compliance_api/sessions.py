"""A request's database transaction: the one place where it begins and ends.

Two kinds of request reach the database. Most take `DbSession`: one session, committed once after the handler
returns (before the response is sent) and rolled back on any error. The hot routes (classify, the passport reads,
the WTTA lookup, rate benchmarks) usually need no session at all, so they open one only when they must, with
`transaction(request)`, which commits on leaving the block. Endpoints never open sessions of their own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Depends
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import HTTPConnection

from compliance_api.services import services_of


async def _request_session(connection: HTTPConnection) -> AsyncIterator[AsyncSession]:
    """One session per request; committed once after the endpoint returns, rolled back on any error."""
    async with services_of(connection).sessionmaker() as session:  # closing without a commit rolls back
        yield session
        await session.commit()


# scope="function": commit before the response is sent, so a failed commit is answered as an error, never a 200.
DbSession = Annotated[AsyncSession, Depends(_request_session, scope="function")]


@asynccontextmanager
async def transaction(connection: HTTPConnection) -> AsyncIterator[AsyncSession]:
    """A transaction for a hot route that needs the database only sometimes: committed on leaving the block, rolled
    back on an error."""
    async with services_of(connection).sessionmaker.begin() as session:
        yield session
