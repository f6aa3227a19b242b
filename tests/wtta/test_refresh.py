"""The worker's scheduled refresh of the production register from COMPLIANCE_WTTA_REGISTER_URL, against a real
local HTTP server serving the register file in tests/wtta/fixtures (with ETags, and a switch to answer 500)."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.logging import configure_logging
from compliance_api.wtta import service
from compliance_api.wtta.refresh import RefreshSchedule, refresh_from_url, refresh_round
from tests.conftest import commits, running_app

Maker = async_sessionmaker[AsyncSession]
REGISTER = Path(__file__).parent / "fixtures" / "register.csv"
INTERVAL = dt.timedelta(hours=24)


@dataclass
class RegisterServer:
    """What the local register server serves, and the requests it got."""

    url: str = ""
    body: bytes = field(default_factory=REGISTER.read_bytes)
    failing: bool = False
    requests: list[dict[str, str]] = field(default_factory=list)
    requested: threading.Event = field(default_factory=threading.Event)

    @property
    def etag(self) -> str:
        return f'"{hashlib.sha256(self.body).hexdigest()[:16]}"'


@pytest.fixture
def register() -> Iterator[RegisterServer]:
    served = RegisterServer()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.requests.append(dict(self.headers))
            served.requested.set()
            if served.failing:
                self.send_error(500)
            elif self.headers.get("If-None-Match") == served.etag:
                self.send_response(304)
                self.end_headers()
            else:
                self.send_response(200)
                self.send_header("Content-Type", "text/csv")
                self.send_header("Content-Length", str(len(served.body)))
                self.send_header("ETag", served.etag)
                self.end_headers()
                self.wfile.write(served.body)

        def log_message(self, format: str, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    served.url = f"http://127.0.0.1:{httpd.server_address[1]}/register.csv"
    try:
        yield served
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def refreshes(outcome: str) -> float:
    return REGISTRY.get_sample_value("compliance_wtta_refreshes_total", {"outcome": outcome}) or 0.0


async def cached(sessionmaker: Maker, kvk: str = "70000003") -> dict[str, Any] | None:
    async with sessionmaker() as session:
        return await service.lookup(session, environment=Environment.live, kvk_number=kvk)


async def test_a_due_round_imports_and_the_next_round_waits_for_the_interval(
    sessionmaker: Maker, register: RegisterServer
) -> None:
    schedule = RefreshSchedule(register.url, INTERVAL)
    now = utcnow()

    assert await refresh_round(sessionmaker, schedule, now=now) == INTERVAL
    found = await cached(sessionmaker)
    assert found is not None
    assert (found["admission_status"], found["source_url"]) == ("revoked", register.url)

    wait = await refresh_round(sessionmaker, schedule, now=now + dt.timedelta(hours=1))
    assert dt.timedelta(hours=22) < wait < dt.timedelta(hours=23, minutes=1)
    assert len(register.requests) == 1, "not due: no request"


async def test_an_unchanged_register_answers_304_and_the_cache_stays(
    sessionmaker: Maker, register: RegisterServer
) -> None:
    schedule = RefreshSchedule(register.url, INTERVAL)
    await refresh_round(sessionmaker, schedule, now=utcnow())
    before = await cached(sessionmaker)
    not_modified = refreshes("not_modified")

    assert await refresh_round(sessionmaker, schedule, now=utcnow() + INTERVAL) == INTERVAL

    assert register.requests[1]["If-None-Match"] == register.etag
    assert refreshes("not_modified") == not_modified + 1
    assert await cached(sessionmaker) == before
    async with sessionmaker() as session:
        refreshed = await service.last_refreshed(session, environment=Environment.live)
    assert before is not None
    assert refreshed is not None
    assert refreshed > before["last_verified_at"], "the check counts as a refresh"


async def test_a_failed_refresh_is_logged_once_counted_kept_and_retried_sooner(
    sessionmaker: Maker, register: RegisterServer, capfd: pytest.CaptureFixture[str]
) -> None:
    configure_logging("info")
    schedule = RefreshSchedule(register.url, INTERVAL)
    await refresh_round(sessionmaker, schedule, now=utcnow())
    before = await cached(sessionmaker)
    failed = refreshes("failed")
    capfd.readouterr()
    register.failing = True
    due = utcnow() + INTERVAL

    first = await refresh_round(sessionmaker, schedule, now=due)
    second = await refresh_round(sessionmaker, schedule, now=due + first)

    assert (first, second) == (dt.timedelta(minutes=1), dt.timedelta(minutes=2))
    assert len(register.requests) == 3, "retried"
    assert refreshes("failed") == failed + 2
    assert await cached(sessionmaker) == before, "the cache is intact"
    logged = [json.loads(line) for line in capfd.readouterr().out.splitlines() if line.startswith("{")]
    failures = [entry for entry in logged if entry["event"] == "wtta_refresh_failed"]
    assert len(failures) == 2, "one line per failure"
    assert "500" in failures[0]["error"]
    assert (failures[0]["attempt"], failures[0]["retry_in_seconds"]) == (1, 60)
    assert not [entry for entry in logged if "exception" in entry], "no traceback"

    register.failing = False
    assert await refresh_round(sessionmaker, schedule, now=due + first + second) == INTERVAL
    assert schedule.failures == 0


def test_retries_back_off_but_stay_under_the_interval() -> None:
    schedule = RefreshSchedule("http://register.test/r.csv", INTERVAL)
    delays = []
    for failures in (1, 2, 3, 11, 100):
        schedule.failures = failures
        delays.append(schedule.retry_delay())
    assert delays[:3] == [dt.timedelta(minutes=1), dt.timedelta(minutes=2), dt.timedelta(minutes=4)]
    assert delays[3:] == [INTERVAL / 2, INTERVAL / 2]


async def test_the_worker_refreshes_the_register_on_its_own(
    settings: Settings, sessionmaker: Maker, register: RegisterServer
) -> None:
    scheduled = settings.model_copy(update={"webhooks_embedded_worker": True, "wtta_register_url": register.url})
    async with running_app(scheduled):
        assert await asyncio.to_thread(register.requested.wait, 30)
    # leaving the app stopped the worker, which finishes the round it started
    assert await cached(sessionmaker) is not None


@commits
async def test_concurrent_refreshes_wait_for_each_other_instead_of_failing(
    sessionmaker: Maker, register: RegisterServer
) -> None:
    """Several workers (or a worker and an operator's import) may import at once; PostgreSQL collided on the primary
    key of the new numbers, SQLite refused the second writer."""
    results = await asyncio.gather(*(refresh_from_url(sessionmaker, url=register.url) for _ in range(3)))

    assert sorted(result.rows_created for result in results) == [0, 0, 3]
    assert await cached(sessionmaker) is not None
