"""Authentication and rate limiting for every `/v1` operation, as one pure ASGI middleware.

A FastAPI dependency costs ~40 µs per request before it does anything (domain/api.md §7); this path runs on every
call, so it lives here and leaves a `Caller` in the request scope. Order: parse header → checksum (no I/O) →
environment → keyed hash → cache or database → rate limit → headers on every response.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import structlog
from sqlalchemy.exc import SQLAlchemyError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from compliance_api.auth import service as auth_service
from compliance_api.auth.caller import Caller
from compliance_api.errors import ERROR_CATALOGUE, PROBLEM_JSON, problem_body
from compliance_api.kit import tokens
from compliance_api.metrics import RATE_LIMITED
from compliance_api.ratelimit.gcra import Decision
from compliance_api.ratelimit.tiers import tier_for

if TYPE_CHECKING:
    from compliance_api.app import Services

log = structlog.get_logger()

API_PATH = re.compile(r"^/(api/)?v1(/|$)")
MAX_HEADER_LENGTH = 256
REALM = 'Bearer realm="compliance-api"'


class AuthFailure(Exception):
    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def bearer_token(scope: Scope) -> str:
    """The one bearer token of the request, or AuthFailure naming what is wrong with the header."""
    values = [value for name, value in scope["headers"] if name == b"authorization"]
    if not values:
        raise AuthFailure("missing_token", "Send `Authorization: Bearer <token>`.")
    if len(values) > 1:
        raise AuthFailure("malformed_token", "Send exactly one Authorization header.")
    raw = values[0]
    if len(raw) > MAX_HEADER_LENGTH:
        raise AuthFailure("malformed_token", "The Authorization header is too long to hold a token.")
    try:
        value = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise AuthFailure("malformed_token", "The Authorization header must be ASCII.") from None
    if not value:
        raise AuthFailure("missing_token", "The Authorization header is empty.")
    scheme, _, credentials = value.partition(" ")
    if scheme.lower() != "bearer":
        raise AuthFailure("malformed_token", "Use the Bearer scheme: `Authorization: Bearer <token>`.")
    credentials = credentials.strip()
    if not credentials:
        raise AuthFailure("malformed_token", "No token follows `Bearer`.")
    if any(c.isspace() for c in credentials):
        raise AuthFailure("malformed_token", "Send exactly one token after `Bearer`.")
    return str(credentials)


def www_authenticate(code: str, detail: str) -> str:
    if code == "missing_token":
        return REALM
    error = "invalid_request" if code == "malformed_token" else "invalid_token"
    return f'{REALM}, error="{error}", error_description="{detail}"'


def rate_limit_headers(decision: Decision, policy: str) -> list[tuple[bytes, bytes]]:
    headers = [
        (b"x-ratelimit-limit", str(decision.limit).encode()),
        (b"x-ratelimit-remaining", str(decision.remaining).encode()),
        (b"x-ratelimit-reset", str(decision.reset_seconds).encode()),
        (b"ratelimit-policy", policy.encode()),
    ]
    if not decision.allowed:
        headers.append((b"retry-after", str(decision.retry_after_seconds).encode()))
    return headers


class ApiGateway:
    def __init__(self, app: ASGIApp, services: Services) -> None:
        self.app = app
        self.services = services

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not API_PATH.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        state = scope["state"]
        try:
            caller = await self._authenticate(scope)
        except AuthFailure as failure:
            extra = [(b"www-authenticate", www_authenticate(failure.code, failure.detail).encode())]
            await self._problem(send, state, failure.code, failure.detail, extra)
            return
        except (SQLAlchemyError, OSError) as exc:  # asyncpg raises OSError when it cannot connect
            log.error("auth_database_unavailable", error=type(exc).__name__)
            await self._problem(send, state, "service_unavailable", None, [(b"retry-after", b"5")])
            return
        state["caller"] = caller
        decision = await self.services.limiter.consume(f"{caller.user_id}:{caller.environment}", caller.tier)
        headers = rate_limit_headers(decision, caller.tier.policy_header)
        if not decision.allowed:
            RATE_LIMITED.labels(tier=caller.tier.name).inc()
            await self._problem(send, state, "rate_limited", None, headers)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *headers]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _authenticate(self, scope: Scope) -> Caller:
        parsed = tokens.parse(bearer_token(scope))
        if parsed is None:
            raise AuthFailure("malformed_token", "The token is mistyped: its checksum does not match.")
        environment = scope["state"]["environment"]
        if parsed.environment is not environment:
            raise AuthFailure(
                "wrong_environment",
                f"A {tokens.PREFIXES[parsed.environment]} token works only on the {parsed.environment.label} host.",
            )
        token_hash = tokens.hash_token(parsed.token, self.services.pepper)
        found, record = self.services.token_cache.get(token_hash)
        if not found:
            async with self.services.sessionmaker.begin() as session:
                record = await auth_service.resolve(session, token_hash=token_hash)
            self.services.token_cache.put(token_hash, record)
        if record is None:
            raise AuthFailure("invalid_token", "The token is unknown.")
        if record.is_revoked:
            raise AuthFailure("revoked_token", "The token was revoked.")
        return Caller(
            user_id=record.user_id,
            token_id=record.token_id,
            environment=record.environment,
            plan=record.plan,
            kind=record.kind,
            tier=tier_for(record.plan, record.environment),
            token_last4=parsed.last4,
        )

    async def _problem(
        self, send: Send, state: dict[str, object], code: str, detail: str | None, headers: list[tuple[bytes, bytes]]
    ) -> None:
        body = problem_body(code, request_id=str(state["request_id"]), base_url=self.services.base_url, detail=detail)
        await send(
            {
                "type": "http.response.start",
                "status": ERROR_CATALOGUE[code].status,
                "headers": [
                    (b"content-type", PROBLEM_JSON.encode()),
                    (b"content-length", str(len(body)).encode()),
                    *headers,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
