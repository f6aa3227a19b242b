"""The passport routes' rows held in each API process's memory, so that most calls read no rows.

Without it every own-passport read and every verification reads a join of three tables (on PostgreSQL a round
trip), which held both routes at about half the health endpoint's rate (bench/RESULTS.md). The rows are kept per
statement and parameters (a freelancer's passport, a share-token's hash) while nothing in `passport`,
`passport_verification` or `passport_share` changes. How a process learns of a change depends on the database.

SQLite (`CountedReader`): row triggers raise `passport_change.version` in the changing transaction (migration
0017); calls read that one row first (a primary-key read on the process's read-only connection, a fraction of the
join), once per pass of the event loop for all the calls of the pass (`PerLoopPass`), and forget the rows when it
moved. No answer is older than the last commit before the pass began: a request sent after a commit was answered is
always answered with it.

PostgreSQL (`MirroredReader`), where any read is a round trip:

* this process's own commits forget them at once, through session hooks (the change is seen before the commit
  call returns, so a revocation through this process is never answered from memory);
* other processes' commits are announced by statement triggers (`NOTIFY passport_changed`, migration 0017)
  and forgotten when the notification arrives, milliseconds after the commit;
* while the LISTEN connection is down (or not yet up) every call reads the database, as without the copy; a
  connection that died without closing is found by its keepalive (30 s).

On both, expiry and validity are judged on every call against the current time, never remembered. Unknown tokens
are not remembered (a flood of random tokens reads the database and fills no memory). `COMPLIANCE_PASSPORT_MIRROR=false`
turns the copy off. Hand-rolled, like the WTTA register's copy: no library caches query results invalidated by
PostgreSQL notifications.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Hashable, Mapping
from itertools import chain
from typing import Any

import structlog
from sqlalchemy import event
from sqlalchemy.orm import ORMExecuteState, Session, UOWTransaction

from compliance_api.kit.per_pass import PerLoopPass
from compliance_api.kit.pg_listen import Follower, listen
from compliance_api.metrics import PASSPORT_READS
from compliance_api.passport.reader import AnySelect, PassportReader, Row, SqliteReader

log = structlog.get_logger(__name__)

CHANNEL = "passport_changed"
LISTENER_NAME = "compliance-api passport listener"  # application_name of the LISTEN connection (pg_stat_activity)
# What the routes read, and the accounts whose deletion cascades into it.
WATCHED_TABLES = frozenset({"passport", "passport_verification", "passport_share", "user_account"})
CHANGED = "passport_rows_changed"  # Session.info flag read by the commit hook
MAX_ENTRIES = 100_000
RETRY_SECONDS = 5.0

_FROM_MEMORY = PASSPORT_READS.labels("memory")
_FROM_DATABASE = PASSPORT_READS.labels("database")


class RowMemory:
    """Rows by statement and parameters, bounded: when full it starts over (one read again per key)."""

    def __init__(self, max_entries: int) -> None:
        self._max_entries = max_entries
        self._rows: dict[Hashable, list[Row]] = {}

    def get(self, key: Hashable) -> list[Row] | None:
        rows = self._rows.get(key)
        (_FROM_DATABASE if rows is None else _FROM_MEMORY).inc()
        return rows

    def put(self, key: Hashable, rows: list[Row]) -> None:
        if not rows:  # unknown tokens are not remembered
            return
        if len(self._rows) >= self._max_entries:
            self._rows = {}
        self._rows[key] = rows

    def clear(self) -> None:
        self._rows = {}


def _key(statement: AnySelect, parameters: Mapping[str, Any]) -> Hashable:
    """The callers pass their parameters in one order per statement."""
    return (statement, *parameters.values())


class CountedReader:
    """SQLite: answers from memory while `passport_change.version` is the one its rows were read at."""

    def __init__(self, source: SqliteReader, *, max_entries: int = MAX_ENTRIES) -> None:
        self._source = source
        self._memory = RowMemory(max_entries)
        self._version: int | None = None
        self._pass_version = PerLoopPass(source.version)

    async def fetch(self, statement: AnySelect, parameters: Mapping[str, Any]) -> list[Row]:
        version = self._pass_version.get()  # read before the rows: rows newer than it are forgotten at the next call
        if version != self._version:
            self._memory.clear()
            self._version = version
        key = _key(statement, parameters)
        rows = self._memory.get(key)
        if rows is None:
            rows = await self._source.fetch(statement, parameters)
            self._memory.put(key, rows)
        return rows


class MirroredReader:
    """A `PassportReader` answering from memory while the LISTEN connection is up and nothing changed."""

    def __init__(
        self,
        source: PassportReader,
        dsn: str,
        *,
        keepalive_seconds: float = 30.0,
        retry_seconds: float = RETRY_SECONDS,
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        self._source = source
        self._dsn = dsn
        self._keepalive_seconds = keepalive_seconds
        self._memory = RowMemory(max_entries)
        self._generation = 0
        self._changed = asyncio.Event()
        self._follower = Follower(
            "passport_mirror",
            self._listen,
            on_heard=self.invalidate,
            on_lost=self.invalidate,
            retry_seconds=retry_seconds,
        )
        _MIRRORS.add(self)

    @property
    def listening(self) -> bool:
        return self._follower.following

    def invalidate(self) -> None:
        """Something the routes read may have changed: forget every row, and any read still under way."""
        self._generation += 1
        self._memory.clear()
        self._changed.set()
        self._changed = asyncio.Event()

    async def changed(self) -> None:
        """Return at the next invalidation (tests and benchmarks wait for a notification with it)."""
        await self._changed.wait()

    async def fetch(self, statement: AnySelect, parameters: Mapping[str, Any]) -> list[Row]:
        self._follower.start()
        if not self._follower.following:
            _FROM_DATABASE.inc()
            return await self._source.fetch(statement, parameters)
        key = _key(statement, parameters)
        rows = self._memory.get(key)
        if rows is None:
            generation = self._generation
            rows = await self._source.fetch(statement, parameters)
            if generation == self._generation:  # nothing was announced while reading
                self._memory.put(key, rows)
        return rows

    async def close(self) -> None:
        await self._follower.close()
        self.invalidate()

    async def _listen(self, on_change: Callable[[], None]) -> None:
        await listen(
            self._dsn, CHANNEL, on_change, application_name=LISTENER_NAME, keepalive_seconds=self._keepalive_seconds
        )


_MIRRORS: weakref.WeakSet[MirroredReader] = weakref.WeakSet()


def _watched(instance: object) -> bool:
    table = getattr(instance, "__table__", None)
    return getattr(table, "name", None) in WATCHED_TABLES


@event.listens_for(Session, "after_flush")
def _flushed(session: Session, _: UOWTransaction) -> None:
    if any(_watched(instance) for instance in chain(session.new, session.dirty, session.deleted)):
        session.info[CHANGED] = True


@event.listens_for(Session, "do_orm_execute")
def _executed(state: ORMExecuteState) -> None:
    """Bulk statements (`update(PassportShare)...`) bypass the flush."""
    if state.is_insert or state.is_update or state.is_delete:
        table = getattr(state.statement, "table", None)
        if getattr(table, "name", None) in WATCHED_TABLES:
            state.session.info[CHANGED] = True


@event.listens_for(Session, "after_commit")
def _committed(session: Session) -> None:
    """This process's own changes reach its copies before the commit call returns."""
    if session.info.pop(CHANGED, False):
        for mirror in _MIRRORS:
            mirror.invalidate()


@event.listens_for(Session, "after_rollback")
def _rolled_back(session: Session) -> None:
    session.info.pop(CHANGED, None)
