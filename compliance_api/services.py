"""The long-lived collaborators of one app instance, composed at start-up.

Part of the app's wiring, above the domains: it imports each domain's slots (`<domain>/dependencies.py`) and fills
them once (`registry`); a request reads its collaborators through the domain's own functions, so no domain imports
this module (tests/test_imports.py). The app, its lifespan and the ASGI layers hold `Services` itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from compliance_api.auth.dependencies import PEPPER, PREVIOUS_PEPPER, TOKEN_CACHE
from compliance_api.classify.dependencies import RULESETS
from compliance_api.config import SETTINGS
from compliance_api.errors import PROBLEMS
from compliance_api.health.dependencies import PROBE
from compliance_api.idempotency.dependencies import IDEMPOTENCY
from compliance_api.kit.group_commit import GROUP_COMMIT
from compliance_api.kit.pagination import CURSORS
from compliance_api.kit.registry import Registry
from compliance_api.passport.dependencies import HOT_PATH, SIGNING_KEYS
from compliance_api.ratelimit.dependencies import LIMITER
from compliance_api.rates.dependencies import BENCHMARKS
from compliance_api.requestlog.dependencies import BUFFER
from compliance_api.sessions import SESSIONMAKER
from compliance_api.webhooks.dependencies import SECRET_BOX
from compliance_api.wtta.dependencies import READER

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


def registry(services: Services) -> Registry:
    """Every domain's slots, filled from `services` (`app.state.registry`)."""
    filled = Registry()
    filled.put(SETTINGS, services.settings)
    filled.put(SESSIONMAKER, services.sessionmaker)
    filled.put(LIMITER, services.limiter)
    filled.put(TOKEN_CACHE, services.token_cache)
    filled.put(PROBE, services.health)
    filled.put(PEPPER, services.pepper)
    filled.put(PREVIOUS_PEPPER, services.previous_pepper)
    filled.put(PROBLEMS, services.problems)
    filled.put(IDEMPOTENCY, services.idempotency)
    filled.put(CURSORS, services.cursors)
    filled.put(RULESETS, services.rulesets)
    filled.put(GROUP_COMMIT, services.audit)
    filled.put(SIGNING_KEYS, services.signing_keys)
    filled.put(READER, services.wtta_reader)
    filled.put(SECRET_BOX, services.webhook_secrets)
    filled.put(BENCHMARKS, services.rate_benchmarks)
    filled.put(HOT_PATH, services.passport_hot_path)
    filled.put(BUFFER, services.request_log)
    return filled
