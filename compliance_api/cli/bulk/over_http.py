"""Batches sent to a deployment's API with httpx, each under its Idempotency-Key, so that sending one again is safe.

A 429 is waited out for as long as its `Retry-After` says, as often as it comes (a refused request had no effect; the
rate limit paces the run). A timeout, a lost connection, a 408, a 5xx or a 409 `idempotency_in_progress` (the same
batch still running, e.g. from a run that was stopped) is retried `attempts` times, waiting twice as long each time
(with jitter, or `Retry-After` when the answer has one); the key makes the server answer a batch it already did from
its record. Any other answer stops the run, and so does a host that does not resolve (no retry: a misspelt
`--base-url` does not become right a minute later). The retry transports of httpx libraries decide by status alone
and wait inside the transport, where the problem's `code` cannot be read and a wait cannot be reported.
"""

from __future__ import annotations

import asyncio
import random
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from compliance_api import __version__
from compliance_api.cli.bulk.rows import Batch
from compliance_api.cli.bulk.runner import BulkAnswer, SendFailed
from compliance_api.idempotency.service import REPLAYED_HEADER
from compliance_api.kit.clock import utcnow
from compliance_api.kit.retry_after import read_retry_after

RETRIED_STATUSES = frozenset({408, 500, 502, 503, 504})
IN_PROGRESS = "idempotency_in_progress"


@dataclass(frozen=True, slots=True)
class Retries:
    attempts: int = 5
    """Retries of a batch after a transient failure (429s are not counted)."""
    first_wait: float = 1.0
    max_wait: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    tell: Callable[[str], None] = lambda _: None
    """Hears of every wait, e.g. to show it on the terminal."""

    def backoff(self, failures: int) -> float:
        """The wait after the `failures`-th transient failure in a row: doubling, capped, with jitter."""
        jitter = random.uniform(0.5, 1.0)  # noqa: S311 (spreads retries, not a secret)
        return min(self.max_wait, self.first_wait * 2.0 ** (failures - 1)) * jitter


def client(
    base_url: str, token: str, timeout: float, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """A client of the deployment at `base_url` (which may have a path prefix), sending the token on every request."""
    return httpx.AsyncClient(
        base_url=base_url,
        headers={"Authorization": f"Bearer {token}", "User-Agent": f"compliance-api-bulk/{__version__}"},
        timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        transport=transport,
    )


@dataclass(frozen=True, slots=True)
class _Failure:
    """An attempt that may succeed when tried again."""

    reason: str
    retry_after: float | None
    counted: bool
    """Whether it counts against `Retries.attempts` (a 429 does not)."""


@dataclass(frozen=True, slots=True)
class HttpSender:
    http: httpx.AsyncClient
    retries: Retries

    async def send(self, batch: Batch) -> BulkAnswer:
        failures = 0
        while True:
            result = await self._attempt(batch)
            if isinstance(result, BulkAnswer):
                return result
            if result.counted:
                failures += 1
                if failures > self.retries.attempts:
                    after = f" (still after {self.retries.attempts} retries)" if self.retries.attempts else ""
                    raise SendFailed(f"{batch.lines}: {result.reason}{after}")
            wait = result.retry_after if result.retry_after is not None else self.retries.backoff(max(failures, 1))
            self.retries.tell(f"{batch.lines}: {result.reason}; retrying in {wait:.0f} s")
            await self.retries.sleep(wait)

    async def _attempt(self, batch: Batch) -> BulkAnswer | _Failure:
        try:
            response = await self.http.post(
                batch.endpoint.value, json={"items": batch.bodies}, headers={"Idempotency-Key": batch.key}
            )
        except httpx.TransportError as exc:  # timeouts included
            if _unresolved(exc):
                raise SendFailed(
                    f"cannot resolve {self.http.base_url.host!r}, the host of --base-url ({exc}); check the address",
                    resumable=False,
                ) from None
            return _Failure(f"{type(exc).__name__}: {exc}".rstrip(":. "), None, counted=True)
        if response.status_code == 200:
            return _answer(batch, response)
        code, detail = _problem(response)
        failure = _Failure(f"{response.status_code} {code}", _retry_after(response), response.status_code != 429)
        if response.status_code == 429 or _transient(response.status_code, code):
            return failure
        raise SendFailed(f"{batch.lines}: the API answered {failure.reason}: {detail}", resumable=False)


def _unresolved(exc: BaseException) -> bool:
    """Whether a connection failed because its host name does not resolve (a `socket.gaierror` under httpx's)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, socket.gaierror):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _transient(status: int, code: str) -> bool:
    return status in RETRIED_STATUSES or (status == 409 and code == IN_PROGRESS)


def _problem(response: httpx.Response) -> tuple[str, str]:
    """The problem's code and detail, or what can be said of an answer that is not a problem (e.g. a proxy's page)."""
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        return body["code"], str(body.get("detail") or body.get("title") or "")
    return "error", response.reason_phrase or "no problem details"


def _retry_after(response: httpx.Response) -> float | None:
    """`Retry-After` in seconds (never below 0), if the answer has a readable one."""
    asked = read_retry_after(response.headers.get("retry-after"), utcnow())
    return None if asked is None else max(asked.total_seconds(), 0.0)


def _answer(batch: Batch, response: httpx.Response) -> BulkAnswer:
    try:
        data = response.json()["data"]
    except (ValueError, KeyError, TypeError):
        raise SendFailed(f"{batch.lines}: the answer is not a batch result") from None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise SendFailed(f"{batch.lines}: the answer is not a batch result")
    return BulkAnswer(data, replayed=response.headers.get(REPLAYED_HEADER) == "true")
