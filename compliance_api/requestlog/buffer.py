"""The request log's buffer: the hot path appends one small record in memory; a background task turns the records
into rows and writes them in batches through the audit trail's group commit (`kit/group_commit.py`).

A request never waits for the database: a full buffer drops the record and counts it
(`compliance_request_log_dropped_total{reason="buffer_full"}`), a failed write drops its batch and counts it
(`reason="write_failed"`). The buffer is flushed every `COMPLIANCE_REQUEST_LOG_FLUSH_SECONDS`, sooner once a batch
is full, and a last time at shutdown.

What is stored, and what never is:

* the route's template (`/v1/passport/{token}/verify`), never the request path with its parameters, nor the query
  string; a path no route matched keeps only its plain segments (lower-case letters, digits, `-`, `.`), the others
  are replaced by `{…}`;
* the problem+json body of a 4xx or 5xx answer, never the body of a successful one, nor any request body;
* the token's id and last four characters, never the token; strings shaped like one of our secrets (`sk_live_`,
  `sk_test_`, `pst_`, `whsec_`) in a stored problem body or request id are redacted.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import uuid
from contextlib import suppress
from typing import Any, NamedTuple

import structlog

from compliance_api.auth.caller import Actor, Caller
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.metrics import REQUEST_LOG_DROPPED
from compliance_api.requestlog.models import ApiRequest

log = structlog.get_logger()

MAX_PROBLEM_BYTES = 8192
"""A problem body is kept up to this size (ours are far smaller); a longer one is not stored."""
BATCH_SIZE = 500
UNLOGGED_ROUTES = frozenset({"/v1/health"})
"""Monitoring probes, not an integration's work: logging them would bury the requests worth finding."""
SECRET_SHAPED = re.compile(r"(sk_live_|sk_test_|pst_|whsec_)[0-9A-Za-z_+/=-]*")
PLAIN_SEGMENT = re.compile(r"[a-z0-9.-]{1,36}")
REDACTED = "[redacted]"


def redact(text: str) -> str:
    """`text` with every secret-shaped string cut to its prefix: `sk_live_[redacted]`."""
    return SECRET_SHAPED.sub(lambda found: found.group(1) + REDACTED, text) if "_" in text else text


def plain_path(path: str) -> str:
    """A path no route matched, with every segment that could carry a value other than a plain word replaced."""
    segments = path.split("/")
    return "/".join(s if not s or PLAIN_SEGMENT.fullmatch(s) else "{…}" for s in segments)[:200]


def problem_text(body: bytes) -> str | None:
    """The stored form of an error answer's body: its problem+json text as answered, redacted (the redaction adds no
    quote or backslash, so the JSON stays whole); None when it is not a JSON object of ours."""
    if not body.startswith(b"{") or len(body) > MAX_PROBLEM_BYTES:
        return None
    try:
        return redact(body.decode())
    except UnicodeDecodeError:
        return None


class Recorded(NamedTuple):
    """What the hot path keeps of one request: references and numbers (a tuple: the cheapest record to make), turned
    into a row by the background flush."""

    finished_at: float  # time.time()
    caller: Actor  # a Caller with its token, or the person signed in to the dashboard
    method: str
    route: str | None
    raw_path: str
    status: int
    elapsed: float
    request_id: str
    rate_limit_remaining: int | None
    problem: bytes | None

    def row(self) -> dict[str, Any]:
        caller = self.caller
        token = caller if isinstance(caller, Caller) else None
        return {
            "id": uuid.uuid4(),
            "environment": caller.environment,
            "user_id": caller.user_id,
            "token_id": token.token_id if token else None,
            "token_last4": token.token_last4 if token else None,
            "created_at": dt.datetime.fromtimestamp(self.finished_at - self.elapsed, dt.UTC),
            "method": self.method[:10],
            "path": self.route or plain_path(self.raw_path),
            "status": self.status,
            "latency_us": round(self.elapsed * 1_000_000),
            "request_id": redact(self.request_id),
            "rate_limit_remaining": self.rate_limit_remaining,
            "problem": problem_text(self.problem) if self.problem is not None and self.status >= 400 else None,
        }


class RequestLogBuffer:
    def __init__(self, audit: GroupCommit, *, capacity: int, flush_seconds: float) -> None:
        self._audit = audit
        self._capacity = capacity
        self._flush_seconds = flush_seconds
        self._records: list[Recorded] = []
        self._due = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._records)

    def record(self, recorded: Recorded) -> None:
        """Keep one request for the next batch (no I/O); dropped and counted when the buffer is full."""
        records = self._records
        if len(records) >= self._capacity:
            REQUEST_LOG_DROPPED.labels(reason="buffer_full").inc()
            return
        records.append(recorded)
        if len(records) == BATCH_SIZE:
            self._due.set()

    def start(self) -> None:
        """Start the background flusher (in the app's start-up)."""
        self._closing = False
        self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        """Stop the flusher and write what is left (at shutdown, before the group commit closes)."""
        self._closing = True
        self._due.set()
        if self._task is not None:
            await self._task
            self._task = None
        await self.flush()

    async def flush(self) -> int:
        """Write every buffered record as one batch; returns how many rows went (0 when the write failed)."""
        records, self._records = self._records, []
        if not records:
            return 0
        rows = [(ApiRequest, recorded.row()) for recorded in records]
        try:
            await self._audit.insert(*rows)
        except Exception as exc:  # the log is best effort: the flusher lives on, the loss is counted and said
            REQUEST_LOG_DROPPED.labels(reason="write_failed").inc(len(rows))
            log.warning("request_log_write_failed", rows=len(rows), error=type(exc).__name__)
            return 0
        return len(rows)

    async def _run(self) -> None:
        while not self._closing:
            with suppress(TimeoutError):
                async with asyncio.timeout(self._flush_seconds):
                    await self._due.wait()
            self._due.clear()
            await self.flush()
