"""Waking the delivery workers when a delivery is queued (a test event, a replay, a retry), instead of leaving it
to their next poll: a worker in this process hears of it when the transaction commits (a commit hook), a worker in
another process on PostgreSQL through `NOTIFY webhook_queued`, which it LISTENs to (`kit.pg_listen`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from compliance_api.webhooks import queries

CHANNEL = "webhook_queued"
_QUEUED = "webhook_delivery_queued"  # Session.info flag read by the commit hook
_WAKERS: set[Callable[[], None]] = set()


async def announce(session: AsyncSession) -> None:
    """Deliveries were queued in `session`'s transaction: wake the workers once it commits."""
    session.info[_QUEUED] = True
    if (await session.connection()).dialect.name == "postgresql":
        await queries.notify(session, CHANNEL)


@contextmanager
def waking(wake: asyncio.Event) -> Iterator[None]:
    """While inside, `wake` is set (from whatever thread commits) whenever this process queues a delivery."""
    loop = asyncio.get_running_loop()

    def set_soon() -> None:
        loop.call_soon_threadsafe(wake.set)

    _WAKERS.add(set_soon)
    try:
        yield
    finally:
        _WAKERS.discard(set_soon)


@event.listens_for(Session, "after_commit")
def _committed(session: Session) -> None:
    if session.info.pop(_QUEUED, False):
        for wake in list(_WAKERS):
            wake()


@event.listens_for(Session, "after_rollback")
def _rolled_back(session: Session) -> None:
    session.info.pop(_QUEUED, None)
