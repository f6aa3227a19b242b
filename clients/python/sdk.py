"""The hand-written layer over the generated client (`compliance_api_client.sdk`): retries, Idempotency-Keys,
auto-paging and typed problems, as a good SDK does them.

    from compliance_api_client.sdk import client, paginate, ProblemError

    api = client("https://api.example.com", token="sk_live_…")
    for event in paginate(event_list.sync, client=api):
        ...

- Retries: 429, 500, 502, 503, 504 and network errors, with exponential backoff and full jitter, honouring
  `Retry-After`, at most `retries` times and never waiting longer than `max_wait` seconds at once (httpx-retries).
- Idempotency-Key: every POST without one gets a random key, kept across its retries, so a retried creation is
  replayed by the server and never runs twice.
- Problems: an answer of 400 or more, after the retries, raises `ProblemError` with the problem's `code`, `detail`
  and `request_id`, whatever the operation documents.
- Paging: `paginate(operation.sync, **arguments)` (or `apaginate(operation.asyncio, …)`) yields every item of a
  list, following `next_cursor`.

Copied into the generated package by clients/generate.sh; it uses only httpx and httpx-retries.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx
from compliance_api_client.client import AuthenticatedClient
from httpx_retries import Retry, RetryTransport

IDEMPOTENCY_KEY = "Idempotency-Key"
RETRIED_STATUSES = (429, 500, 502, 503, 504)
RETRIED_METHODS = ("GET", "HEAD", "PUT", "PATCH", "DELETE", "POST")  # POST is safe to retry under its key


class ProblemError(Exception):
    """An `application/problem+json` answer: `status`, `code` (stable, see /errors), `detail` (for people),
    `request_id` (quote it to support) and the whole `problem` as sent."""

    def __init__(self, status: int, problem: dict[str, Any], request_id: str | None) -> None:
        self.status = status
        self.problem = problem
        self.code: str = problem.get("code", "http_error")
        self.detail: str = problem.get("detail") or problem.get("title") or f"HTTP {status}"
        self.request_id = problem.get("request_id") or request_id
        super().__init__(f"{status} {self.code}: {self.detail} (request {self.request_id})")


def _problem(response: httpx.Response) -> ProblemError:
    try:
        body = response.json()
    except ValueError:
        body = None
    problem = body if isinstance(body, dict) else {}
    return ProblemError(response.status_code, problem, response.headers.get("X-Request-Id"))


def _with_key(request: httpx.Request) -> httpx.Request:
    if request.method == "POST" and IDEMPOTENCY_KEY not in request.headers:
        request.headers[IDEMPOTENCY_KEY] = str(uuid.uuid4())
    return request


class SdkTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Keys every POST, retries through httpx-retries, and raises a problem instead of returning it."""

    def __init__(self, retry: Retry) -> None:
        self._retrying = RetryTransport(transport=httpx.HTTPTransport(), retry=retry)
        self._retrying_async = RetryTransport(transport=httpx.AsyncHTTPTransport(), retry=retry)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._retrying.handle_request(_with_key(request))
        if response.status_code >= 400:
            response.read()
            raise _problem(response)
        return response

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._retrying_async.handle_async_request(_with_key(request))
        if response.status_code >= 400:
            await response.aread()
            raise _problem(response)
        return response

    def close(self) -> None:
        self._retrying.close()

    async def aclose(self) -> None:
        await self._retrying_async.aclose()


def client(
    base_url: str,
    token: str,
    *,
    retries: int = 3,
    backoff: float = 0.5,
    max_wait: float = 30.0,
    timeout: float = 30.0,
) -> AuthenticatedClient:
    """An `AuthenticatedClient` for every generated operation (sync and asyncio), with the layer's behaviour. The n-th
    retry waits a random time up to `backoff` × 2ⁿ seconds, or what `Retry-After` asks, never over `max_wait`."""
    retry = Retry(
        total=retries,
        backoff_factor=backoff,
        max_backoff_wait=max_wait,
        status_forcelist=RETRIED_STATUSES,
        allowed_methods=RETRIED_METHODS,
    )
    return AuthenticatedClient(
        base_url,
        token=token,
        timeout=httpx.Timeout(timeout),
        httpx_args={"transport": SdkTransport(retry)},
    )


def paginate(operation: Callable[..., Any], **arguments: Any) -> Iterator[Any]:
    """Every item of a list: `operation` is a list operation's `sync`, called with `arguments` and then each
    `next_cursor` until `has_more` is false."""
    cursor = arguments.pop("cursor", None)
    while True:
        page = operation(**arguments, **({"cursor": cursor} if cursor else {}))
        yield from page.data
        if not page.has_more:
            return
        cursor = page.next_cursor


async def apaginate(operation: Callable[..., Awaitable[Any]], **arguments: Any) -> AsyncIterator[Any]:
    """`paginate` for a list operation's `asyncio`."""
    cursor = arguments.pop("cursor", None)
    while True:
        page = await operation(**arguments, **({"cursor": cursor} if cursor else {}))
        for item in page.data:
            yield item
        if not page.has_more:
            return
        cursor = page.next_cursor
