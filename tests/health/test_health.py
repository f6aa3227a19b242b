from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from httpx import ASGITransport, AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api import __version__
from compliance_api.app import create_app
from compliance_api.auth import service as auth_service
from compliance_api.auth import tokens
from compliance_api.auth.cache import resolution
from compliance_api.config import Settings
from compliance_api.health.probe import Check, HealthStatus, assess
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.wtta import register_import
from compliance_api.wtta.register_file import validate
from tests.conftest import commits
from tests.factories import bearer, create_token

pytestmark = commits  # each test starts an app or server of its own on the test database


async def test_health_answers_with_status_region_and_version(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, token = await create_token(sessionmaker, pepper)
    response = await client.get("/v1/health", headers=bearer(token))
    assert response.status_code == 200
    assert response.json() == {
        "livemode": True,
        "status": "ok",
        "region": "local",
        "version": __version__,
        "wtta": {"imported_at": None, "age_seconds": None},
    }


def test_assess_rules() -> None:
    fast, slow, failed = Check(True, 1.0), Check(True, 900.0), Check(False, 1.0, "ConnectionRefusedError")
    assert assess(fast, None, slow_ms=250) is HealthStatus.ok
    assert assess(fast, fast, slow_ms=250) is HealthStatus.ok
    assert assess(slow, fast, slow_ms=250) is HealthStatus.degraded
    assert assess(fast, slow, slow_ms=250) is HealthStatus.degraded
    assert assess(fast, failed, slow_ms=250) is HealthStatus.degraded
    assert assess(failed, fast, slow_ms=250) is HealthStatus.down
    assert assess(failed, failed, slow_ms=250) is HealthStatus.down


async def serve(settings: Settings) -> AsyncIterator[tuple[FastAPI, AsyncClient]]:
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        async with AsyncClient(transport=ASGITransport(app=application), base_url="http://api.test") as http:
            yield application, http


async def test_redis_unreachable_is_degraded_and_requests_still_served(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, token = await create_token(sessionmaker, pepper)
    broken = settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"})
    async for _, http in serve(broken):
        response = await http.get("/v1/health", headers=bearer(token))
        assert response.status_code == 200
        assert response.json()["status"] == "degraded"
        assert response.headers["x-ratelimit-remaining"] == "119"
        ready = await http.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["redis"]["reachable"] is False


async def test_slow_database_is_degraded(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, token = await create_token(sessionmaker, pepper)
    impatient = settings.model_copy(update={"health_slow_ms": 0.000001})
    async for _, http in serve(impatient):
        response = await http.get("/v1/health", headers=bearer(token))
        assert response.json()["status"] == "degraded"


async def test_unreachable_database_is_down(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, tmp_path: Path
) -> None:
    """A worker that lost its database still answers health for a token it already knows, with `down`/503."""
    _, token = await create_token(sessionmaker, pepper)
    async with sessionmaker() as session:
        record = await auth_service.resolve(session, token_hash=tokens.hash_token(token, pepper))
    unreachable = (
        "sqlite:///" + str(tmp_path / "missing-dir" / "db.sqlite")
        if settings.is_sqlite
        else "postgresql://postgres@127.0.0.1:1/test"
    )
    async for application, http in serve(settings.model_copy(update={"database_url": unreachable})):
        application.state.services.token_cache.put(
            tokens.hash_token(token, pepper), resolution(Environment.live, record, last4=token[-4:])
        )
        response = await http.get("/v1/health", headers=bearer(token))
        assert response.status_code == 503
        assert response.json()["status"] == "down"
        ready = await http.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["database"]["reachable"] is False
        unknown = await http.get("/v1/health", headers=bearer(tokens.generate(Environment.live)))
        assert unknown.status_code == 503
        assert unknown.json()["code"] == "service_unavailable"


@pytest.mark.parametrize("path", ["/livez", "/readyz"])
async def test_probes_need_no_token(client: AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


async def import_register(sessionmaker: async_sessionmaker[AsyncSession], environment: Environment) -> None:
    rows = [validate(("70000001", "Age B.V.", "admitted", "", "", ""), "line", 1)]
    async with sessionmaker.begin() as session:
        await register_import.import_rows(
            session, environment=environment, rows=rows, origin=register_import.ImportSource("r.csv", "test register")
        )


@pytest.mark.parametrize(
    ("scheduled", "hours_old", "status"), [(True, 3, "degraded"), (True, 1, "ok"), (False, 3, "ok")]
)
async def test_health_reports_the_register_age_and_degrades_past_twice_the_refresh_interval(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
    monkeypatch: pytest.MonkeyPatch,
    scheduled: bool,
    hours_old: int,
    status: str,
) -> None:
    imported_at = utcnow() - dt.timedelta(hours=hours_old)
    monkeypatch.setattr(register_import, "utcnow", lambda: imported_at)
    await import_register(sessionmaker, Environment.live)
    monkeypatch.undo()
    _, token = await create_token(sessionmaker, pepper)
    schedule = {"wtta_register_url": "http://register.test/r.csv" if scheduled else "", "wtta_refresh_hours": 1.0}
    async for _, http in serve(settings.model_copy(update=schedule)):
        body = (await http.get("/v1/health", headers=bearer(token))).json()
    assert body["status"] == status
    assert dt.datetime.fromisoformat(body["wtta"]["imported_at"]) == imported_at
    assert abs(body["wtta"]["age_seconds"] - hours_old * 3600) < 60


async def test_a_scheduled_register_never_refreshed_is_degraded_in_production_only(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, live = await create_token(sessionmaker, pepper)
    _, test = await create_token(sessionmaker, pepper, environment=Environment.test)
    scheduled = settings.model_copy(update={"wtta_register_url": "http://register.test/r.csv"})
    async for application, http in serve(scheduled):
        assert (await http.get("/v1/health", headers=bearer(live))).json()["status"] == "degraded"
        sandbox = {"Host": "sandbox.localhost", **bearer(test)}
        assert (await http.get("/v1/health", headers=sandbox)).json()["status"] == "ok"
        await import_register(sessionmaker, Environment.live)
        await application.state.services.health.probe_once()
        body = (await http.get("/v1/health", headers=bearer(live))).json()
        assert (body["status"], body["wtta"]["age_seconds"]) == ("ok", 0)
