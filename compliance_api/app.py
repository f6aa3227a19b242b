"""The application factory: `create_app(settings)` wires settings, database, limiter, caches and routes."""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import structlog
from fastapi import FastAPI
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response

from compliance_api import CONTRACT_VERSION, __version__
from compliance_api.api import API_ROUTERS
from compliance_api.auth.cache import TokenCache
from compliance_api.auth.gateway import ApiGateway
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.config import Deployment, Settings, unknown_settings_in_environment
from compliance_api.dashboard.app import create_dashboard
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.errors import Problems, install_error_handlers
from compliance_api.health.endpoints import probes
from compliance_api.health.probe import HealthProbe
from compliance_api.hints import install_hints
from compliance_api.idempotency.service import Idempotency
from compliance_api.kit.batch_writer import batch_writer_for
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.kit.pagination import Cursors
from compliance_api.logging import configure_logging
from compliance_api.middleware import RequestContext
from compliance_api.openapi.contract import build_contract
from compliance_api.openapi.endpoints import mount_docs_assets, mount_guide
from compliance_api.openapi.endpoints import router as openapi_router
from compliance_api.openapi.feed import router as feed_router
from compliance_api.passport.endpoints import jwks_router
from compliance_api.passport.hot_path import new_hot_path
from compliance_api.passport.signing import SigningKeys
from compliance_api.ratelimit.breaker import CircuitBreaker
from compliance_api.ratelimit.limiter import Limiter, MemoryLimiter, RedisLimiter
from compliance_api.rates.cache import BenchmarkCache
from compliance_api.requestlog.buffer import RequestLogBuffer
from compliance_api.retention.jobs import run_daily
from compliance_api.services import Services, registry
from compliance_api.sessions import OneConnectionPerTask
from compliance_api.webhooks.catalogue import register_webhooks
from compliance_api.webhooks.signing import secret_box
from compliance_api.webhooks.worker import Worker
from compliance_api.wtta.reader import lookup_reader_for
from compliance_api.wtta.refresh import run_wtta_refresh

log = structlog.get_logger()
CORS_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
CORS_REQUEST_HEADERS = ("Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id")
CORS_EXPOSED_HEADERS = (
    "X-Request-Id",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "RateLimit-Policy",
    "Retry-After",
    "Idempotent-Replayed",
    "Deprecation",
    "Sunset",
    "Link",
)


def build_services(
    settings: Settings,
    *,
    sessionmaker: async_sessionmaker[AsyncSession] | None = None,
    audit: GroupCommit | None = None,
) -> Services:
    """The app's collaborators. `sessionmaker` and `audit` replace the sessions and the group commit on the app's own
    engine (the tests bind both to one connection that they roll back)."""
    engine = create_engine(settings.resolved_database_url)
    redis = (
        Redis.from_url(settings.redis_url, socket_timeout=2, socket_connect_timeout=2) if settings.redis_url else None
    )
    limiter: Limiter = (
        RedisLimiter(redis, breaker=CircuitBreaker(cool_down=settings.redis_cool_down_seconds))
        if redis is not None
        else MemoryLimiter()
    )
    pepper = settings.secret_key_bytes()
    audit = audit or GroupCommit(batch_writer_for(engine))
    sessionmaker = sessionmaker or create_sessionmaker(engine, OneConnectionPerTask)
    return Services(
        settings=settings,
        engine=engine,
        sessionmaker=sessionmaker,
        redis=redis,
        limiter=limiter,
        token_cache=TokenCache(settings.token_cache_ttl_seconds),
        health=HealthProbe(
            engine,
            redis,
            slow_ms=settings.health_slow_ms,
            interval=settings.health_probe_interval_seconds,
            wtta_stale_after=dt.timedelta(hours=2 * settings.wtta_refresh_hours)
            if settings.wtta_register_url
            else None,
        ),
        pepper=pepper,
        previous_pepper=settings.previous_secret_key_bytes(),
        public_base_url=settings.public_base_url.rstrip("/"),
        problems=Problems(settings.public_base_url.rstrip("/")),
        idempotency=Idempotency(pepper, sessionmaker),
        cursors=Cursors.from_secrets(settings.secret_keys()),
        rulesets=packaged_rulesets(),
        audit=audit,
        signing_keys=_signing_keys(settings),
        wtta_reader=lookup_reader_for(
            settings.resolved_database_url,
            postgres_pool_size=settings.wtta_read_pool_size,
            replica=settings.wtta_replica,
        ),
        webhook_secrets=secret_box(settings),
        rate_benchmarks=BenchmarkCache(settings.rates_cache_seconds),
        passport_hot_path=new_hot_path(engine, mirror=settings.passport_mirror),
        request_log=RequestLogBuffer(
            audit, capacity=settings.request_log_buffer, flush_seconds=settings.request_log_flush_seconds
        ),
    )


def _signing_keys(settings: Settings) -> SigningKeys:
    """Embedded mode makes its first keys on demand; production must have them and refuses to start without."""
    keys = SigningKeys(
        settings.resolved_signing_keys_dir,
        generate=settings.deployment is Deployment.embedded,
        operator=settings.operator_name,
    )
    if settings.deployment is Deployment.production:
        for environment in Environment:
            keys.keys(environment)
    return keys


@dataclass(slots=True)
class EmbeddedWorker:
    """The webhook worker, the daily purges and the WTTA register refresh as tasks of the API process
    (`COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER`, on in `serve`)."""

    worker: Worker
    stopping: asyncio.Event
    tasks: tuple[asyncio.Task[None], ...]

    async def stop(self) -> None:
        self.stopping.set()
        await asyncio.gather(*self.tasks)
        await self.worker.close()


def _start_webhook_worker(services: Services) -> EmbeddedWorker | None:
    if not services.settings.webhooks_embedded_worker:
        return None
    worker = Worker(services.settings, services.sessionmaker, services.webhook_secrets)
    stopping = asyncio.Event()
    tasks = (
        asyncio.create_task(worker.run(stopping)),
        asyncio.create_task(run_daily(services.sessionmaker, services.settings, stopping)),
        asyncio.create_task(run_wtta_refresh(services.sessionmaker, services.settings, stopping)),
    )
    return EmbeddedWorker(worker, stopping, tasks)


def create_app(settings: Settings | None = None, *, services: Services | None = None) -> FastAPI:
    """The app, on `services` (by default built from `settings`)."""
    settings = services.settings if services is not None else settings or Settings()
    configure_logging(settings.log_level)
    for name, likely in unknown_settings_in_environment():  # a misspelt setting is otherwise silently ignored
        log.warning("unknown_setting", variable=name, did_you_mean=likely)
    services = services or build_services(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await services.health.start()
        services.request_log.start()
        worker = _start_webhook_worker(services)
        # Start-up objects live as long as the process: keep them out of the garbage collector's full passes,
        # which otherwise pause the event loop for 60-100 ms under load (bench/RESULTS.md).
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            if worker is not None:
                await worker.stop()
            await services.health.stop()
            await services.request_log.close()
            await services.audit.close()
            await services.limiter.close()
            if services.wtta_reader is not None:
                await services.wtta_reader.close()
            await services.passport_hot_path.close()
            await services.engine.dispose()

    app = FastAPI(
        title="Compliance API",
        version=CONTRACT_VERSION,
        summary=f"compliance-api {__version__}",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
        # Starlette's slash redirect builds an absolute Location from the Host header; an API path with a
        # trailing slash answers a problem+json 404 instead (the guide redirects /guide itself, relatively).
        redirect_slashes=False,
    )
    app.state.services = services
    app.state.registry = registered = registry(services)
    install_error_handlers(app, services.problems)
    install_hints(app, services.problems)
    for router in API_ROUTERS:
        app.include_router(router)
    app.include_router(probes)
    app.include_router(openapi_router)
    app.include_router(feed_router)
    app.include_router(jwks_router)
    register_webhooks(app)
    mount_docs_assets(app)
    mount_guide(app, settings.guide_dir)
    app.mount("/freelancer", create_dashboard(services, registered), name="dashboard")
    if settings.metrics_enabled:
        app.add_route("/metrics", _metrics, include_in_schema=False)
    _install_contract(app)
    app.add_middleware(ApiGateway, services=services)
    if settings.cors_allow_origins:  # closed by default: no CORS headers, preflights get 405
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_allow_origins),
            allow_methods=list(CORS_METHODS),
            allow_headers=list(CORS_REQUEST_HEADERS),
            expose_headers=list(CORS_EXPOSED_HEADERS),
            max_age=600,
        )
    app.add_middleware(RequestContext, services=services)
    return app


async def _metrics(_: Request) -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


def _install_contract(app: FastAPI) -> None:
    cached: dict[str, Any] = {}

    def openapi() -> dict[str, Any]:
        if not cached:
            cached.update(build_contract(app))
        return cached

    app.openapi = openapi  # type: ignore[method-assign]
