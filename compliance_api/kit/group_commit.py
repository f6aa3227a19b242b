"""Group commit: rows from many concurrent requests inserted in one transaction, each request answered after it.

An audit row and its outbox event per request are the hot path's only writes. Committing each request alone costs
a transaction per request (several thread hand-offs on SQLite, a round trip per statement on PostgreSQL); batching
the rows that arrive while the previous batch commits keeps the durability (nobody is answered before their rows
are committed) at a fraction of the cost. SQLAlchemy has no such facility, hence this small class.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import Table
from sqlalchemy.exc import IntegrityError

from compliance_api.db import Base
from compliance_api.kit.batch_writer import BatchWriter
from compliance_api.kit.registry import Slot, collaborator

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

Row = Mapping[str, Any]
TableRow = tuple[type[Base], Row]
Pending = tuple[tuple[TableRow, ...], asyncio.Future[None]]


class GroupCommit:
    def __init__(self, writer: BatchWriter, *, max_batch: int = 500) -> None:
        self._writer = writer
        self._max_batch = max_batch
        self._pending: list[Pending] = []
        self._flushing: asyncio.Task[None] | None = None

    async def insert(self, *rows: TableRow) -> None:
        """Insert one caller's rows (any tables; all or none of them); returns once they are committed, raises the
        database's error if they are not."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((rows, future))
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self._write_pending())
        # shield: a caller that goes away must not cancel the commit that other callers wait for
        await asyncio.shield(future)

    async def close(self) -> None:
        """Wait for the rows already handed over, then close the database writer (at shutdown)."""
        if self._flushing is not None:
            await self._flushing
        await self._writer.close()

    async def _write_pending(self) -> None:
        while self._pending:
            batch, self._pending = self._pending[: self._max_batch], self._pending[self._max_batch :]
            try:
                await self._commit(batch)
            except IntegrityError:
                if len(batch) == 1:
                    continue
                for single in batch:  # one bad row must not fail the rows batched with it
                    with contextlib.suppress(IntegrityError):  # already handed to that row's waiter
                        await self._commit([single])

    async def _commit(self, batch: list[Pending]) -> None:
        """Insert the batch in one transaction and settle its waiters; re-raises integrity errors for the caller."""
        by_table: dict[Table, list[Row]] = {}  # first-seen order: a caller lists parents before children
        for rows, _ in batch:
            for model, row in rows:
                by_table.setdefault(model.metadata.tables[model.__tablename__], []).append(row)
        try:
            await self._writer.write(by_table)
        except IntegrityError as exc:
            if len(batch) == 1:
                _settle(batch, exc)
            raise
        except Exception as exc:  # every waiter gets the error; the writer task itself must live on
            _settle(batch, exc)
        else:
            _settle(batch, None)


GROUP_COMMIT = Slot[GroupCommit]("group commit")


def group_commit_of(connection: HTTPConnection) -> GroupCommit:
    """The app's group commit (the audit rows and records of the hot routes)."""
    return collaborator(connection, GROUP_COMMIT)


def _settle(batch: list[Pending], error: BaseException | None) -> None:
    for _, future in batch:
        if future.done():
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
