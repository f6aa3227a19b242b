"""The cached register held in each API process's memory, so that a lookup reads no database (bench/RESULTS.md).

Hand-rolled on purpose: no library keeps a million rows compactly in process memory and reloads them by version.
The rows are kept as standard-library arrays, one per column, sorted by KvK number (about 100 bytes a row: some
100 MB at 1,000,000 rows, a few MB for the real register's thousands). `COMPLIANCE_WTTA_REPLICA=false` turns it off.

A process answers from its copy only while the copy's version equals the environment's version in the database
(`WttaRegisterVersion`, raised in the transaction of every import and purge). It learns of a new version:

* from its own commits, through a session commit hook, at once;
* on SQLite, through `PRAGMA data_version` (a commit by any other connection changes it), read once per pass of
  the event loop for the lookups of that pass (a commit before the pass began is always seen);
* on PostgreSQL, through `LISTEN wtta_register`: the import's NOTIFY is delivered when it commits. While that
  connection is down, every lookup reads the database.

Until the new version is loaded, in the background, lookups read the database: an answer is never older than the
last committed change, except for the notification's delivery time on PostgreSQL (milliseconds), or, should the
LISTEN connection die without closing, until its keepalive finds out (`PostgresLookup`, 30 s by default).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from array import array
from bisect import bisect_left
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import structlog
from sqlalchemy import event
from sqlalchemy.orm import Session

from compliance_api.kit.environment import Environment
from compliance_api.kit.outage import is_database_unreachable
from compliance_api.kit.pg_listen import Follower
from compliance_api.metrics import WTTA_LOOKUP_READS, WTTA_REPLICA_ROWS
from compliance_api.wtta.models import AdmissionStatus
from compliance_api.wtta.register_import import REGISTER_CHANGED

log = structlog.get_logger(__name__)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)
STATUSES = tuple(status.value for status in AdmissionStatus)
STATUS_INDEX = {status: index for index, status in enumerate(STATUSES)}
NO_TIME = -(1 << 63)
RETRY_SECONDS = 5.0

# One row as the sources hand it over: kvk_number, legal_name, admission_status, admission_number, admitted_at,
# expires_at, source, source_url, last_verified_at, missing_from_source_at; times in microseconds since 1970 (UTC).
SnapshotRow = tuple[str, str, str, str | None, int | None, int | None, str, str | None, int, int | None]

_FROM_MEMORY = WTTA_LOOKUP_READS.labels("memory")
_FROM_DATABASE = WTTA_LOOKUP_READS.labels("database")


def microseconds(value: datetime) -> int:
    """An aware datetime as microseconds since 1970 (UTC)."""
    return (value - EPOCH) // MICROSECOND


def _time(value: int) -> datetime | None:
    return None if value == NO_TIME else EPOCH + timedelta(microseconds=value)


class _Texts:
    """Strings packed in one buffer: a str object per row would cost some 60 bytes of overhead each."""

    __slots__ = ("_data", "_ends", "_nulls")

    def __init__(self) -> None:
        self._data = bytearray()
        self._ends = array("Q")
        self._nulls = bytearray()

    def append(self, value: str | None) -> None:
        if value is not None:
            self._data += value.encode()
        self._ends.append(len(self._data))
        self._nulls.append(value is None)

    def __getitem__(self, index: int) -> str | None:
        if self._nulls[index]:
            return None
        start = self._ends[index - 1] if index else 0
        return self._data[start : self._ends[index]].decode()


class Snapshot:
    """One environment's register at one version, as the lookup reads it (same dict as `service.lookup`)."""

    __slots__ = (
        "_admitted",
        "_covered_at",
        "_expires",
        "_kvks",
        "_missing",
        "_names",
        "_numbers",
        "_origin_ids",
        "_origins",
        "_origins_of",
        "_statuses",
        "_verified",
        "environment",
        "version",
    )

    def __init__(self, environment: Environment, version: int, covered_at: datetime | None) -> None:
        self.environment = environment
        self.version = version
        self._covered_at = NO_TIME if covered_at is None else microseconds(covered_at)
        self._kvks = array("I")
        self._names = _Texts()
        self._statuses = bytearray()
        self._numbers = _Texts()
        self._admitted, self._expires, self._verified, self._missing = (array("q") for _ in range(4))
        self._origins: list[tuple[str, str | None]] = []  # (source, source_url): one per import, shared by its rows
        self._origin_ids: dict[tuple[str, str | None], int] = {}
        self._origins_of = array("I")

    def __len__(self) -> int:
        return len(self._kvks)

    def append(self, row: SnapshotRow) -> None:
        """Add the next row; rows come in ascending KvK number order."""
        kvk, name, status, number, admitted, expires, source, source_url, verified, missing = row
        key = int(kvk)
        if self._kvks and key <= self._kvks[-1]:
            raise ValueError(f"rows out of order at KvK number {kvk}")
        self._kvks.append(key)
        self._names.append(name)
        self._statuses.append(STATUS_INDEX[status])
        self._numbers.append(number)
        self._admitted.append(NO_TIME if admitted is None else admitted)
        self._expires.append(NO_TIME if expires is None else expires)
        self._verified.append(verified)
        self._missing.append(NO_TIME if missing is None else missing)
        origin = (source, source_url)
        origin_id = self._origin_ids.get(origin)
        if origin_id is None:
            origin_id = self._origin_ids[origin] = len(self._origins)
            self._origins.append(origin)
        self._origins_of.append(origin_id)

    def get(self, kvk_number: str) -> dict[str, Any] | None:
        key = int(kvk_number)
        index = bisect_left(self._kvks, key)
        if index == len(self._kvks) or self._kvks[index] != key:
            return None
        source, source_url = self._origins[self._origins_of[index]]
        return {
            "environment": self.environment.value,
            "kvk_number": kvk_number,
            "legal_name": self._names[index],
            "admission_status": STATUSES[self._statuses[index]],
            "admission_number": self._numbers[index],
            "admitted_at": _time(self._admitted[index]),
            "expires_at": _time(self._expires[index]),
            "source": source,
            "source_url": source_url,
            # The later of the row's stamp and the newest import that listed every number (as `service.lookup`).
            "last_verified_at": _time(max(self._verified[index], self._covered_at)),
            "missing_from_source_at": _time(self._missing[index]),
        }


class RegisterSource(Protocol):
    """What the replica needs of a database reader (`wtta/reader.py`)."""

    async def lookup(self, environment: Environment, kvk_number: str) -> dict[str, Any] | None: ...

    async def versions(self) -> dict[Environment, int]: ...

    async def snapshot(self, environment: Environment) -> Snapshot:
        """The environment's version and rows, read in one transaction."""
        ...

    def committed_elsewhere(self) -> bool:
        """Cheap check, on every lookup: may another connection have committed since the last call?"""
        ...

    async def watch(self, on_change: Callable[[], None]) -> None:
        """Call `on_change` once watching and whenever a change may have been committed; return or raise when the
        watch is lost."""
        ...

    async def close(self) -> None: ...


class ReplicatedLookup:
    """The lookup reader of the API: memory while current, the database otherwise."""

    def __init__(self, source: RegisterSource, *, retry_seconds: float = RETRY_SECONDS) -> None:
        self._source = source
        self._retry_seconds = retry_seconds
        self._snapshots: dict[Environment, Snapshot] = {}
        self._versions: dict[Environment, int] | None = None  # None: to be read before the next answer from memory
        self._generation = 0
        self._reading = asyncio.Lock()
        self._watching = asyncio.Event()
        self._follower = Follower(
            "wtta_replica",
            source.watch,
            on_heard=self._changed,
            on_lost=self._watching.clear,
            retry_seconds=retry_seconds,
        )
        self._loads: dict[Environment, asyncio.Task[None]] = {}
        self._failed_at: dict[Environment, float] = {}
        _REPLICAS.add(self)

    def invalidate(self) -> None:
        """The register may have changed: read the versions again before answering from memory."""
        self._generation += 1
        self._versions = None

    async def lookup(self, environment: Environment, kvk_number: str) -> dict[str, Any] | None:
        self._follower.start()
        if self._source.committed_elsewhere():
            self.invalidate()
        if self._watching.is_set():
            versions = self._versions or await self._read_versions_once()
            snapshot = self._snapshots.get(environment)
            if snapshot is not None and snapshot.version == versions[environment]:
                _FROM_MEMORY.inc()
                return snapshot.get(kvk_number)
            if snapshot is None or snapshot.version < versions[environment]:
                self._load(environment)
            else:  # loaded after a change whose announcement is still on its way: read the versions again
                self.invalidate()
        _FROM_DATABASE.inc()
        return await self._source.lookup(environment, kvk_number)

    async def wait_loaded(self, environment: Environment) -> int:
        """Bring this environment's copy up to date now; returns its row count (tests, benchmarks, warm-up)."""
        self._follower.start()
        await self._watching.wait()
        versions = await self._read_versions()
        snapshot = self._snapshots.get(environment)
        if snapshot is None or snapshot.version != versions[environment]:
            self._load(environment)
            if (task := self._loads.get(environment)) is not None:
                await asyncio.shield(task)
        return len(self._snapshots.get(environment, ()))

    async def close(self) -> None:
        tasks = list(self._loads.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(self._follower.close(), *tasks, return_exceptions=True)  # connections let go
        self._snapshots.clear()
        await self._source.close()

    async def _read_versions_once(self) -> dict[Environment, int]:
        """Concurrent lookups after a change share one read instead of each querying the versions."""
        async with self._reading:
            return self._versions or await self._read_versions()

    async def _read_versions(self) -> dict[Environment, int]:
        generation = self._generation
        versions = await self._source.versions()
        if generation == self._generation:  # no change was announced while reading
            self._versions = versions
        return versions

    def _load(self, environment: Environment) -> None:
        failed_at = self._failed_at.get(environment)
        if environment in self._loads or (failed_at is not None and time.monotonic() - failed_at < self._retry_seconds):
            return
        self._snapshots.pop(environment, None)  # out of date: free its memory before the new copy takes its place
        WTTA_REPLICA_ROWS.labels(environment.value).set(0)
        self._loads[environment] = asyncio.create_task(self._reload(environment))

    async def _reload(self, environment: Environment) -> None:
        started = time.perf_counter()
        try:
            snapshot = await self._source.snapshot(environment)
        except Exception as exc:
            self._failed_at[environment] = time.monotonic()
            if is_database_unreachable(exc):
                self._follower.outage.failed(exc)
            else:
                log.exception("wtta.replica.load_failed", environment=environment.value)
        else:
            self._follower.outage.succeeded()
            self._failed_at.pop(environment, None)
            self._snapshots[environment] = snapshot
            WTTA_REPLICA_ROWS.labels(environment.value).set(len(snapshot))
            seconds = round(time.perf_counter() - started, 3)
            log.info(
                "wtta.replica.loaded",
                environment=environment.value,
                version=snapshot.version,
                rows=len(snapshot),
                seconds=seconds,
            )
        finally:
            del self._loads[environment]

    def _changed(self) -> None:
        """Called when listening starts and on every change."""
        self._watching.set()
        self.invalidate()


_REPLICAS: weakref.WeakSet[ReplicatedLookup] = weakref.WeakSet()


@event.listens_for(Session, "after_commit")
def _register_committed(session: Session) -> None:
    """This process's own imports and purges reach its replicas before the commit call returns."""
    if session.info.pop(REGISTER_CHANGED, False):
        for replica in _REPLICAS:
            replica.invalidate()
