"""Authentication and rate limiting for every `/v1` operation, as one pure ASGI middleware.

A FastAPI dependency costs ~40 µs per request before it does anything; this path runs on every
call, so it lives here and leaves a `Caller` in the request scope. Order: parse header → keyed hash → cache; on
a miss: checksum (no I/O) → environment → one shared database lookup; then rate limit → headers on every response.
"""

from __future__ import annotations

import asyncio
import functools
import re
from typing import TYPE_CHECKING, Protocol

import structlog
from sqlalchemy.exc import SQLAlchemyError
from starlette.types import ASGIApp, Receive, Scope, Send

from compliance_api.auth import service as auth_service
from compliance_api.auth import tokens
from compliance_api.auth.cache import CachedToken, TokenCache, resolution
from compliance_api.errors import ErrorCode
from compliance_api.kit.addresses import request_bases
from compliance_api.kit.environment import Environment
from compliance_api.kit.outage import RETRY_AFTER_SECONDS, is_database_unreachable
from compliance_api.metrics import RATE_LIMITED
from compliance_api.ratelimit.gcra import Decision
from compliance_api.ratelimit.limiter import MemoryLimiter
from compliance_api.ratelimit.tiers import TIERS

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

    from compliance_api.config import Settings
    from compliance_api.errors import Problems
    from compliance_api.ratelimit.limiter import Limiter

log = structlog.get_logger()

API_PATH = re.compile(r"^/(api/)?v1(/|$)")
MAX_HEADER_LENGTH = 256
REALM = 'Bearer realm="compliance-api"'
RETRY_AFTER = (b"retry-after", b"%d" % RETRY_AFTER_SECONDS)


class AuthFailure(Exception):
    def __init__(self, code: ErrorCode, detail: str) -> None:
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
    if len(credentials.split(None, 1)) > 1:
        raise AuthFailure("malformed_token", "Send exactly one token after `Bearer`.")
    return str(credentials)


def www_authenticate(code: str, detail: str) -> str:
    if code == "missing_token":
        return REALM
    error = "invalid_request" if code == "malformed_token" else "invalid_token"
    return f'{REALM}, error="{error}", error_description="{detail}"'


def rate_limit_headers(decision: Decision, policy: bytes) -> list[tuple[bytes, bytes]]:
    headers = [
        (b"x-ratelimit-limit", b"%d" % decision.limit),
        (b"x-ratelimit-remaining", b"%d" % decision.remaining),
        (b"x-ratelimit-reset", b"%d" % decision.reset_seconds),
        (b"ratelimit-policy", policy),
    ]
    if not decision.allowed:
        headers.append((b"retry-after", b"%d" % decision.retry_after_seconds))
    return headers


POLICY_HEADERS = {name: tier.policy_header.encode() for name, tier in TIERS.items()}


class GatewayServices(Protocol):
    """What the gateway reads on each request (the app's `services.Services` has them all)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def sessionmaker(self) -> async_sessionmaker[AsyncSession]: ...
    @property
    def limiter(self) -> Limiter: ...
    @property
    def token_cache(self) -> TokenCache: ...
    @property
    def pepper(self) -> bytes: ...
    @property
    def previous_pepper(self) -> bytes | None: ...
    @property
    def problems(self) -> Problems: ...


class ApiGateway:
    def __init__(self, app: ASGIApp, services: GatewayServices) -> None:
        self.app = app
        self.services = services
        self._lookups: dict[str, asyncio.Task[CachedToken]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not API_PATH.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        state = scope["state"]
        try:
            cached = await self._authenticate(scope)
        except AuthFailure as failure:
            extra = [(b"www-authenticate", www_authenticate(failure.code, failure.detail).encode())]
            await self.services.problems.send(send, scope, failure.code, detail=failure.detail, headers=extra)
            return
        except (SQLAlchemyError, OSError) as exc:  # asyncpg raises OSError when it cannot connect
            if not is_database_unreachable(exc):
                raise
            log.error("auth_database_unavailable", error=type(exc).__name__)
            await self.services.problems.send(send, scope, "service_unavailable", headers=[RETRY_AFTER])
            return
        caller = cached.caller
        assert caller is not None
        state["caller"] = caller
        limiter = self.services.limiter
        if isinstance(limiter, MemoryLimiter):  # decided in-process: skip a coroutine per request
            decision = limiter.consume_now(cached.limiter_key, caller.tier)
        else:
            decision = await limiter.consume(cached.limiter_key, caller.tier)
        state["rate_limit_remaining"] = decision.remaining  # for the request log
        headers = rate_limit_headers(decision, POLICY_HEADERS[caller.tier.name])
        if not decision.allowed:
            RATE_LIMITED.labels(tier=caller.tier.name).inc()
            await self.services.problems.send(send, scope, "rate_limited", headers=headers)
            return
        state["response_headers"] = headers  # stamped by RequestContext on the response, whatever it is
        state["limiter_key"] = cached.limiter_key  # for routes that cost more than one request (batches)
        await self.app(scope, receive, send)

    async def _authenticate(self, scope: Scope) -> CachedToken:
        """The caller behind the bearer token; a mistyped token fails on its checksum before any I/O."""
        credentials = bearer_token(scope)
        token_hash = tokens.hash_token(credentials, self.services.pepper)
        cached, refresh = self.services.token_cache.get(token_hash)
        if cached is None:
            parsed = tokens.parse(credentials)
            if parsed is None:
                raise AuthFailure("malformed_token", tokens.malformation(credentials))
            self._check_environment(parsed.environment, scope)
            cached = await self._resolve(token_hash, parsed.environment, credentials)
        elif refresh and token_hash not in self._lookups:
            self._start_lookup(token_hash, cached.environment, credentials)
        self._check_environment(cached.environment, scope)
        if cached.record is None:
            raise AuthFailure("invalid_token", "The token is unknown.")
        if cached.record.is_revoked:
            raise AuthFailure("revoked_token", "The token was revoked.")
        return cached

    def _check_environment(self, token_environment: Environment, scope: Scope) -> None:
        if token_environment is not scope["state"]["environment"]:
            settings = self.services.settings
            bases = request_bases(
                scope, settings.public_base_url, settings.sandbox_listener_port, settings.sandbox_hosts
            )
            base_url = bases.production if token_environment is Environment.live else bases.sandbox
            where = token_environment.place
            raise AuthFailure(
                "wrong_environment",
                f"A {tokens.PREFIXES[token_environment]} token works only in {where}: send it to {where}'s base "
                f"URL{f', {base_url}' if base_url else ''}.",
            )

    async def _resolve(self, token_hash: str, environment: Environment, credentials: str) -> CachedToken:
        """One database lookup per token at a time: concurrent misses (a cache expiry under load) share it."""
        task = self._lookups.get(token_hash) or self._start_lookup(token_hash, environment, credentials)
        # Shielded: a client that disconnects cancels its own wait, not the lookup the others share.
        return await asyncio.shield(task)

    def _start_lookup(self, token_hash: str, environment: Environment, credentials: str) -> asyncio.Task[CachedToken]:
        task = asyncio.create_task(self._lookup(token_hash, environment, credentials))
        self._lookups[token_hash] = task
        task.add_done_callback(functools.partial(self._lookup_done, token_hash))
        return task

    def _lookup_done(self, token_hash: str, task: asyncio.Task[CachedToken]) -> None:
        self._lookups.pop(token_hash, None)
        if not task.cancelled() and task.exception() is not None:  # a background refresh nobody awaited
            log.warning("token_lookup_failed", error=type(task.exception()).__name__)

    async def _lookup(self, token_hash: str, environment: Environment, credentials: str) -> CachedToken:
        """The token behind `token_hash`, also under the retired secret while one is set (then re-hashed)."""
        previous = self.services.previous_pepper
        previous_hash = None if previous is None else tokens.hash_token(credentials, previous)
        sessionmaker = self.services.sessionmaker
        async with sessionmaker() as session:
            record, changes = await auth_service.find(session, token_hash=token_hash, previous_hash=previous_hash)
        cached = resolution(environment, record, last4=credentials[-4:])
        # Cached before the write: on SQLite under load the write waits its turn for up to seconds, and a background
        # refresh that waited with it let busy tokens' entries expire, so their requests waited too.
        self.services.token_cache.put(token_hash, cached)
        if record is not None and changes:
            async with sessionmaker.begin() as session:
                await auth_service.stamp(session, record.token_id, changes)
        return cached
