"""The outermost pure ASGI middleware: request id, environment, body limit, security headers, access log, metrics,
the request log, last-resort 500 (503 with `Retry-After` when the database is unreachable)."""

from __future__ import annotations

import os
import re
import time
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from compliance_api.auth.caller import Caller
from compliance_api.classify import batch
from compliance_api.errors import ApiError, FieldError, too_large_detail
from compliance_api.kit.environment import Environment, InvalidHost, environment_for_host
from compliance_api.kit.outage import RETRY_AFTER_SECONDS, is_database_unreachable
from compliance_api.kit.schemas import NUL, NUL_MESSAGE
from compliance_api.logging import ACCESS_LOG, logs_info
from compliance_api.metrics import LATENCY, REQUESTS
from compliance_api.requestlog.buffer import MAX_PROBLEM_BYTES, SECRET_SHAPED, UNLOGGED_ROUTES, Recorded

if TYPE_CHECKING:
    from compliance_api.services import Services

log = structlog.get_logger()

SANE_REQUEST_ID = re.compile(rb"^[A-Za-z0-9._:-]{1,128}$")
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)


def security_headers(hsts_max_age_seconds: int) -> tuple[tuple[bytes, bytes], ...]:
    """The headers of a response to an https request: HSTS only there (RFC 6797 §7.2), and only when enabled.

    Behind a proxy, uvicorn sets the scheme from `X-Forwarded-Proto` only for `COMPLIANCE_FORWARDED_ALLOW_IPS`.
    """
    if hsts_max_age_seconds <= 0:
        return SECURITY_HEADERS
    return (*SECURITY_HEADERS, (b"strict-transport-security", b"max-age=%d" % hsts_max_age_seconds))


class RequestIds:
    """Request ids as random as `secrets.token_hex(12)` (12 bytes of the OS's CSPRNG each), read from the OS
    `batch` ids at a time: one `getrandom` call per `batch` requests instead of one per request. A forked child
    drops the bytes it inherited, so no two processes hand out the same id."""

    ID_BYTES = 12

    def __init__(self, batch: int = 256) -> None:
        self._batch = batch
        self._random = b""
        self._at = 0
        os.register_at_fork(after_in_child=self._forget)

    def next(self) -> str:
        if self._at >= len(self._random):
            self._random, self._at = os.urandom(self.ID_BYTES * self._batch), 0
        start = self._at
        self._at += self.ID_BYTES
        return "req_" + self._random[start : self._at].hex()

    def _forget(self) -> None:
        self._random, self._at = b"", 0


REQUEST_IDS = RequestIds()


def _usable_request_id(offered: bytes) -> bool:
    """A client's request id is echoed and logged, so one shaped like a token or secret is replaced instead."""
    return bool(SANE_REQUEST_ID.match(offered)) and not (b"_" in offered and SECRET_SHAPED.search(offered.decode()))


def _context_headers(scope: Scope) -> tuple[bytes, list[bytes], bytes | None]:
    """(x-request-id, every host, content-length) in one pass over the request headers."""
    request_id = b""
    hosts: list[bytes] = []
    length = None
    for key, value in scope["headers"]:
        if key == b"x-request-id":
            request_id = value
        elif key == b"host":
            hosts.append(value)
        elif key == b"content-length":
            length = value
    return request_id, hosts, length


def _environment(hosts: list[bytes], sandbox_hosts: tuple[str, ...], on_sandbox_port: bool) -> Environment | FieldError:
    """The request's environment, or why its Host header is refused (RFC 9112 §3.2: exactly one, and valid): the
    sandbox port's requests are the sandbox whatever their Host; elsewhere the Host header decides."""
    if len(hosts) > 1:
        return FieldError("header.host", "must be sent once")
    try:
        by_host = environment_for_host(hosts[0].decode("latin-1") if hosts else "", sandbox_hosts)
    except InvalidHost:
        return FieldError("header.host", "must be a host name or address with an optional port (0-65535)")
    return Environment.test if on_sandbox_port else by_host


def _nul_field(scope: Scope) -> FieldError | None:
    """The query or path parameter holding a NUL character (PostgreSQL cannot store it in text), if any."""
    query = scope["query_string"].decode("latin-1")
    for name, value in parse_qsl(query, keep_blank_values=True) if "%00" in query else ():
        if NUL in name or NUL in value:
            return FieldError(f"query.{name.replace(NUL, '')}", NUL_MESSAGE)
    # Path parameters are matched later, inside the routers: the path as a whole is named.
    return FieldError("path", NUL_MESSAGE) if NUL in scope["path"] else None


class RequestContext:
    def __init__(self, app: ASGIApp, services: Services) -> None:
        self.app = app
        self.services = services
        self.sandbox_hosts = services.settings.sandbox_hosts
        self.sandbox_port = services.settings.sandbox_listener_port
        self.max_body = services.settings.max_body_bytes
        self.too_large = too_large_detail(self.max_body, "")
        self.batch_too_large = too_large_detail(self.max_body, batch.TOO_LARGE_ADVICE)
        self.access_log = services.settings.access_log and logs_info(services.settings.log_level)
        self.https_headers = security_headers(services.settings.hsts_max_age_seconds)
        self.request_log = services.request_log
        self.problems = services.problems

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        offered, hosts, length = _context_headers(scope)
        request_id = offered.decode() if _usable_request_id(offered) else REQUEST_IDS.next()
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        server = scope.get("server")
        on_sandbox_port = self.sandbox_port is not None and server is not None and server[1] == self.sandbox_port
        environment = _environment(hosts, self.sandbox_hosts, on_sandbox_port)
        state["environment"] = environment if isinstance(environment, Environment) else Environment.live
        invalid = environment if isinstance(environment, FieldError) else _nul_field(scope)
        status = 500
        response_started = False
        problem: list[bytes] = []  # an error answer's body, for the request log
        security = self.https_headers if scope.get("scheme") == "https" else SECURITY_HEADERS

        async def send_wrapper(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = message["status"]
                message["headers"] = [
                    *message.get("headers", ()),
                    *state.get("response_headers", ()),
                    *security,
                    (b"x-request-id", request_id.encode()),
                ]
            elif status >= 400 and message["type"] == "http.response.body":
                problem.append(message.get("body", b""))
            await send(message)

        try:
            if invalid is not None:
                await self.problems.send(send_wrapper, scope, "validation_failed", errors=(invalid,))
            elif length is not None and length.isascii() and length.isdigit() and int(length) > self.max_body:
                await self.problems.send(send_wrapper, scope, "payload_too_large", detail=self._too_large(scope))
            else:
                await self.app(scope, self._limited(scope, receive), send_wrapper)
        except Exception as exc:
            if response_started:
                log.exception("unhandled_error", request_id=request_id, path=scope["path"])
                raise
            await self._answer_failure(send_wrapper, scope, exc)
        finally:
            self._record(scope, state, status, time.perf_counter() - started, problem)

    async def _answer_failure(self, send: Send, scope: Scope, error: Exception) -> None:
        """503 with `Retry-After` when the database is out of reach (a warning, no traceback); else a logged 500."""
        request_id, path = scope["state"]["request_id"], scope["path"]
        if is_database_unreachable(error):
            log.warning("database_unavailable", request_id=request_id, path=path, error=type(error).__name__)
            retry = ((b"retry-after", b"%d" % RETRY_AFTER_SECONDS),)
            await self.problems.send(send, scope, "service_unavailable", headers=retry)
            return
        log.exception("unhandled_error", request_id=request_id, path=path)
        await self.problems.send(send, scope, "internal_error")

    def _limited(self, scope: Scope, receive: Receive) -> Receive:
        """Count streamed bodies too. (Starlette's own body limit answers in plain text, outside problem+json.)"""
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise ApiError("payload_too_large", self._too_large(scope))
            return message

        return limited_receive

    def _too_large(self, scope: Scope) -> str:
        """The 413's detail: the limit, and on a batch operation, to split the batch."""
        return self.batch_too_large if scope["path"] in batch.PATHS else self.too_large

    def _record(
        self, scope: Scope, state: dict[str, object], status: int, elapsed: float, problem: list[bytes]
    ) -> None:
        route = getattr(scope.get("route"), "path", None)
        template = route or "unmatched"
        REQUESTS.labels(scope["method"], template, str(status)).inc()
        LATENCY.labels(template).observe(elapsed)
        caller = state.get("caller")
        if isinstance(caller, Caller) and template not in UNLOGGED_ROUTES:
            self._log_request(scope, state, caller, route, status, elapsed, problem)
        if not self.access_log:
            return
        ACCESS_LOG.request(
            request_id=state["request_id"],
            user_id=str(caller.user_id) if isinstance(caller, Caller) else None,
            environment=str(state["environment"]),
            method=scope["method"],
            route=template,
            status=status,
            duration_ms=round(elapsed * 1000, 3),
        )

    def _log_request(
        self,
        scope: Scope,
        state: dict[str, object],
        caller: Caller,
        route: str | None,
        status: int,
        elapsed: float,
        problem: list[bytes],
    ) -> None:
        """Hand the request to the request log's buffer (memory only; written later, in batches)."""
        body = b"".join(problem) if problem and sum(map(len, problem)) <= MAX_PROBLEM_BYTES else None
        remaining = state.get("rate_limit_remaining")
        self.request_log.record(
            Recorded(
                finished_at=time.time(),
                caller=caller,
                method=scope["method"],
                route=route,
                raw_path=scope["path"],
                status=status,
                elapsed=elapsed,
                request_id=str(state["request_id"]),
                rate_limit_remaining=remaining if isinstance(remaining, int) else None,
                problem=body,
            )
        )
