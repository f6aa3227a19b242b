"""Structured JSON logs on stdout, one object per line."""

from __future__ import annotations

import asyncio
import atexit
import datetime as dt
import logging
from typing import IO, Any

import orjson
import structlog

# File descriptor 1 itself rather than `sys.stdout`, which test runners and frameworks swap out: loggers are
# cached on first use, and must keep writing to wherever stdout points now.
STDOUT = open(1, "wb", closefd=False)


def _numeric(level: str) -> int:
    numeric = logging.getLevelName(level.upper())
    return numeric if isinstance(numeric, int) else logging.INFO


def logs_info(level: str) -> bool:
    """Whether `COMPLIANCE_LOG_LEVEL` `level` lets info lines through (the access log's)."""
    return _numeric(level) <= logging.INFO


def configure_logging(level: str = "info") -> None:
    numeric = _numeric(level)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(serializer=orjson.dumps),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.BytesLoggerFactory(STDOUT),
        cache_logger_on_first_use=True,
    )


class AccessLog:
    """The access log, one JSON line per request (`"event": "request"`, the level and timestamp structlog's lines
    carry): rendered by one `orjson.dumps` rather than structlog's processor chain, and the lines of one pass of the
    event loop written together, after the pass's requests are answered (one write for them all, none in a request).

    No line is lost: each is written within the loop pass that logged it, outside a loop at once, and anything
    pending at interpreter exit then."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._pending: list[bytes] = []
        atexit.register(self.flush)

    def request(self, **fields: Any) -> None:
        fields["event"] = "request"
        fields["level"] = "info"
        fields["timestamp"] = dt.datetime.now(dt.UTC)
        line = orjson.dumps(fields, option=orjson.OPT_UTC_Z | orjson.OPT_APPEND_NEWLINE)
        if self._pending:
            self._pending.append(line)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop: nothing to batch with
            self._write(line)
            return
        self._pending.append(line)
        loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write the pending lines (the loop calls it once per pass in which lines were logged)."""
        if self._pending:
            lines, self._pending = self._pending, []
            self._write(b"".join(lines))

    def _write(self, data: bytes) -> None:
        self._stream.write(data)
        self._stream.flush()


ACCESS_LOG = AccessLog(STDOUT)
