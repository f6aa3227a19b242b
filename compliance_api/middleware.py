"""The outermost pure ASGI middleware: request id, environment, body limit, security headers, access log, metrics,
last-resort 500."""

from __future__ import annotations

import re
import secrets
import time
from typing import TYPE_CHECKING

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from compliance_api.auth.caller import Caller
from compliance_api.errors import ApiError, send_problem
from compliance_api.kit.environment import environment_for_host
from compliance_api.metrics import LATENCY, REQUESTS

if TYPE_CHECKING:
    from compliance_api.app import Services

log = structlog.get_logger()
access_log = structlog.get_logger("access")

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


def _context_headers(scope: Scope) -> tuple[bytes, bytes, bytes | None]:
    """(x-request-id, host, content-length) in one pass over the request headers."""
    request_id = host = b""
    length = None
    for key, value in scope["headers"]:
        if key == b"x-request-id":
            request_id = value
        elif key == b"host":
            host = value
        elif key == b"content-length":
            length = value
    return request_id, host, length


class RequestContext:
    def __init__(self, app: ASGIApp, services: Services) -> None:
        self.app = app
        self.services = services
        self.sandbox_hosts = services.settings.sandbox_hosts
        self.max_body = services.settings.max_body_bytes
        self.access_log = services.settings.access_log
        self.https_headers = security_headers(services.settings.hsts_max_age_seconds)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        offered, host, length = _context_headers(scope)
        request_id = offered.decode() if SANE_REQUEST_ID.match(offered) else "req_" + secrets.token_hex(12)
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        state["environment"] = environment_for_host(host.decode("latin-1"), self.sandbox_hosts)
        status = 500
        response_started = False
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
            await send(message)

        try:
            if length is not None and length.isdigit() and int(length) > self.max_body:
                await self._send_problem(send_wrapper, state, "payload_too_large")
            else:
                await self.app(scope, self._limited(receive), send_wrapper)
        except Exception:
            log.exception("unhandled_error", request_id=request_id, path=scope["path"])
            if response_started:
                raise
            await self._send_problem(send_wrapper, state, "internal_error")
        finally:
            self._record(scope, state, status, time.perf_counter() - started)

    def _limited(self, receive: Receive) -> Receive:
        """Count streamed bodies too. (Starlette's own body limit answers in plain text, outside problem+json.)"""
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise ApiError("payload_too_large")
            return message

        return limited_receive

    async def _send_problem(self, send: Send, state: dict[str, object], code: str) -> None:
        await send_problem(send, code, request_id=str(state["request_id"]), base_url=self.services.base_url)

    def _record(self, scope: Scope, state: dict[str, object], status: int, elapsed: float) -> None:
        route = scope.get("route")
        template = getattr(route, "path", None) or "unmatched"
        REQUESTS.labels(scope["method"], template, str(status)).inc()
        LATENCY.labels(template).observe(elapsed)
        if not self.access_log:
            return
        caller = state.get("caller")
        access_log.info(
            "request",
            request_id=state["request_id"],
            user_id=str(caller.user_id) if isinstance(caller, Caller) else None,
            environment=str(state["environment"]),
            method=scope["method"],
            route=template,
            status=status,
            duration_ms=round(elapsed * 1000, 3),
        )
