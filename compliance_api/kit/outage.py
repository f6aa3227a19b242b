"""Database outages: telling "cannot reach the database" from a failed statement, and riding one out in a loop.

A request that meets an outage answers 503 `service_unavailable` with `Retry-After` (`RETRY_AFTER_SECONDS`); a
background loop waits longer and longer between attempts (`DatabaseOutage`) and logs the outage once, not a
traceback per attempt.
"""

from __future__ import annotations

import socket
import sqlite3

import asyncpg  # type: ignore[import-untyped]
import structlog
from sqlalchemy import exc as sa
from structlog.typing import FilteringBoundLogger

RETRY_AFTER_SECONDS = 5

_UNREACHABLE: tuple[type[BaseException], ...] = (
    # SQLAlchemy: the driver's connection-level errors, a connection found dead, and the pool's checkout timeout.
    sa.OperationalError,
    sa.InterfaceError,
    sa.DisconnectionError,
    sa.TimeoutError,
    # What asyncpg raises while connecting, unwrapped: refused, timed out, unknown host.
    ConnectionError,
    TimeoutError,
    socket.gaierror,
    # asyncpg on our own pools (the WTTA lookup, the audit writer): a lost connection, a server that refuses or
    # is shutting down.
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.CannotConnectNowError,
    asyncpg.TooManyConnectionsError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
)


_SQLITE_UNAVAILABLE = ("unable to open database file", "database is locked", "disk i/o error")


def is_database_unreachable(error: BaseException) -> bool:
    """Whether `error`, or an error it wraps, says the database cannot be reached (a constraint violation, a bad
    statement or a bug says no)."""
    current: BaseException | None = error
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        if isinstance(current, sa.DBAPIError) and isinstance(current.orig, sqlite3.Error):
            return _sqlite_unavailable(current.orig)
        if isinstance(current, _UNREACHABLE):
            return True
        if isinstance(current, sa.DBAPIError) and current.connection_invalidated:
            return True
        seen.add(id(current))
        wrapped = current.orig if isinstance(current, sa.DBAPIError) else None
        current = wrapped if isinstance(wrapped, BaseException) else current.__cause__
    return False


def _sqlite_unavailable(error: sqlite3.Error) -> bool:
    """SQLite reports a missing table or a syntax error as an OperationalError too: only these say "try later"."""
    return str(error).lower().startswith(_SQLITE_UNAVAILABLE)


class DatabaseOutage:
    """One background loop's view of the database: while it is unreachable, an exponential wait between attempts
    (`first_wait`, doubling, capped at `max_wait`); one log line when it goes and one when it is back."""

    def __init__(self, loop: str, *, first_wait: float = 0.5, max_wait: float = 30.0) -> None:
        self.loop = loop
        self.first_wait = first_wait
        self.max_wait = max_wait
        self.failures = 0

    @property
    def unreachable(self) -> bool:
        return self.failures > 0

    @property
    def next_wait(self) -> float:
        """The seconds to wait before the next attempt after the failed ones so far."""
        return min(self.max_wait, self.first_wait * 2.0 ** min(max(self.failures - 1, 0), 32))

    def failed(self, error: BaseException) -> float:
        """Count one failed attempt; the seconds to wait before the next."""
        if not self.failures:
            _log().warning("database_unreachable", loop=self.loop, error=type(error).__name__)
        self.failures += 1
        return self.next_wait

    def succeeded(self) -> None:
        if self.failures:
            _log().info("database_reachable_again", loop=self.loop, failed_attempts=self.failures)
        self.failures = 0


def _log() -> FilteringBoundLogger:
    """A logger bound now: these lines are rare, and a fresh logger follows the current logging configuration."""
    logger: FilteringBoundLogger = structlog.get_logger("compliance_api.outage")
    return logger
