"""The long-lived collaborators of one app instance, and the one typed way to reach them from a request.

Part of the app's wiring: only what sits above the domains uses it (the app, the ASGI layers, endpoints, dashboard
pages, `sessions`); no domain service or model imports it, so the import graph has no cycle (tests/test_imports.py).
It imports the collaborators' types for the type checker only. `services_of(request)` is a plain function, so the hot
path keeps no `Depends`; endpoints that like dependencies take `AppServices`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, cast

from fastapi import Depends
from starlette.requests import HTTPConnection

from compliance_api.kit.addresses import Bases, request_bases

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

    from compliance_api.auth.cache import TokenCache
    from compliance_api.classify.ruleset import Rulesets
    from compliance_api.config import Settings
    from compliance_api.errors import Problems
    from compliance_api.health.probe import HealthProbe
    from compliance_api.idempotency.service import Idempotency
    from compliance_api.kit.group_commit import GroupCommit
    from compliance_api.kit.pagination import Cursors
    from compliance_api.passport.hot_path import HotPath
    from compliance_api.passport.signing import SigningKeys
    from compliance_api.ratelimit.limiter import Limiter
    from compliance_api.rates.cache import BenchmarkCache
    from compliance_api.requestlog.buffer import RequestLogBuffer
    from compliance_api.webhooks.signing import SecretBox
    from compliance_api.wtta.reader import LookupReader


@dataclass(slots=True)
class Services:
    """Long-lived collaborators shared by middleware and endpoints (one per app instance)."""

    settings: Settings
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    redis: Redis | None
    limiter: Limiter
    token_cache: TokenCache
    health: HealthProbe
    pepper: bytes
    previous_pepper: bytes | None  # set only while COMPLIANCE_SECRET_KEY is being rotated
    public_base_url: str  # COMPLIANCE_PUBLIC_BASE_URL; empty: links follow each request's address
    problems: Problems
    idempotency: Idempotency
    cursors: Cursors  # seals list cursors under the server secret
    rulesets: Rulesets
    audit: GroupCommit
    signing_keys: SigningKeys
    wtta_reader: LookupReader | None
    webhook_secrets: SecretBox
    rate_benchmarks: BenchmarkCache
    passport_hot_path: HotPath
    request_log: RequestLogBuffer


def services_of(connection: HTTPConnection) -> Services:
    """The app's services, from any request (`app.state.services`, set once by `create_app`)."""
    return cast("Services", connection.app.state.services)


def settings_of(connection: HTTPConnection) -> Settings:
    return services_of(connection).settings


def problem_base_url(connection: HTTPConnection) -> str:
    """Where the `type` URLs of this request's problems point."""
    return services_of(connection).problems.base_url(connection.scope)


def bases_of(connection: HTTPConnection) -> Bases:
    """Where production and the sandbox are reached, seen from the address this request came in on."""
    settings = services_of(connection).settings
    return request_bases(
        connection.scope, settings.public_base_url, settings.sandbox_listener_port, settings.sandbox_hosts
    )


AppServices = Annotated["Services", Depends(services_of)]
"""The app's services as an endpoint parameter."""
