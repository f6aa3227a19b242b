"""The worker's scheduled refresh of the production register from COMPLIANCE_WTTA_REGISTER_URL, against a real
local HTTP server serving the register file in tests/wtta/fixtures (with ETags, and a switch to answer 500)."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import os
import signal
import sys
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
from compliance_api.webhooks import service as webhooks_service
from compliance_api.wtta import service
from compliance_api.wtta.refresh import RefreshSchedule, refresh_from_url, refresh_round
from tests.conftest import SECRET, commits, running_app
from tests.factories import create_user, create_webhook_endpoint
from tests.webhooks.receiver import Receiver, receiving

Maker = async_sessionmaker[AsyncSession]
REGISTER = Path(__file__).parent / "fixtures" / "register.csv"
INTERVAL = dt.timedelta(hours=24)


@dataclass
class RegisterServer:
    """What the local register server serves, and the requests it got."""

    url: str = ""
    body: bytes = field(default_factory=REGISTER.read_bytes)
    failing: bool = False
    validators: bool = True  # send an ETag and answer 304 to it
    bodies_served: int = 0
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
            elif served.validators and self.headers.get("If-None-Match") == served.etag:
                self.send_response(304)
                self.end_headers()
            else:
                served.bodies_served += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/csv")
                self.send_header("Content-Length", str(len(served.body)))
                if served.validators:
                    self.send_header("ETag", served.etag)
                self.end_headers()
                self.wfile.write(served.body)

        def log_message(self, format: str, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # serve_forever checks for shutdown every poll interval: 0.5 s by default, each test's teardown waited for it
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
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


@commits
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


HEADER = b"kvk_number,legal_name,admission_status,admission_number,admitted_at,expires_at\n"
BAD_FILES = {
    "a date before the year 1": (
        HEADER + b"70000003,Acme BV,admitted,A-1,0001-01-01T00:00:00+23:59,\n",
        "line 2, field admitted_at: '0001-01-01T00:00:00+23:59' must lie between 0001-01-01T00:00:00Z and "
        "9999-12-31T23:59:59Z (in UTC)",
    ),
    "a date after 9999": (
        HEADER + b"70000003,Acme BV,admitted,A-1,2026-01-01,9999-12-31T23:59:59-23:59\n",
        "line 2, field expires_at: '9999-12-31T23:59:59-23:59' must lie between 0001-01-01T00:00:00Z and "
        "9999-12-31T23:59:59Z (in UTC)",
    ),
    "100,000 nested [": (
        b"[" * 100_000,
        "line 1, record 1, field -: invalid JSON: nested too deeply (a record is one object of plain values)",
    ),
}


def logged(out: str, event: str) -> list[dict[str, Any]]:
    entries = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [entry for entry in entries if entry["event"] == event]


@commits  # two imports: PostgreSQL drops the first one's staging table only when its transaction ends
@pytest.mark.parametrize("bad", BAD_FILES)
async def test_a_bad_file_is_refused_on_one_line_naming_line_and_field_counted_and_the_cache_kept(
    sessionmaker: Maker, register: RegisterServer, capfd: pytest.CaptureFixture[str], bad: str
) -> None:
    configure_logging("info")
    schedule = RefreshSchedule(register.url, INTERVAL)
    await refresh_round(sessionmaker, schedule, now=utcnow())
    before = await cached(sessionmaker)
    refused = refreshes("refused")
    capfd.readouterr()
    register.body, error = BAD_FILES[bad]

    assert await refresh_round(sessionmaker, schedule, now=utcnow() + INTERVAL) == dt.timedelta(minutes=1)

    out = capfd.readouterr().out
    [line] = logged(out, "wtta_refresh_refused")
    assert (line["error"], line["unchanged"], line["attempt"]) == (error, False, 1)
    assert "exception" not in line
    assert refreshes("refused") == refused + 1
    assert before is not None
    assert await cached(sessionmaker) == before, "the cache is intact"


async def test_an_unchanged_refused_file_is_not_downloaded_again_not_even_after_a_restart(
    sessionmaker: Maker, register: RegisterServer, capfd: pytest.CaptureFixture[str]
) -> None:
    configure_logging("info")
    register.body, error = BAD_FILES["a date before the year 1"]
    first = await refresh_round(sessionmaker, RefreshSchedule(register.url, INTERVAL), now=utcnow())
    assert first == dt.timedelta(minutes=1)
    assert register.bodies_served == 1
    unchanged = refreshes("refused_unchanged")
    capfd.readouterr()

    restarted = RefreshSchedule(register.url, INTERVAL)  # a new worker process: nothing in memory
    for _ in range(2):
        await refresh_round(sessionmaker, restarted, now=utcnow())

    assert register.bodies_served == 1, "asked for conditionally, answered 304"
    assert [request["If-None-Match"] for request in register.requests[1:]] == [register.etag] * 2
    assert refreshes("refused_unchanged") == unchanged + 2
    lines = logged(capfd.readouterr().out, "wtta_refresh_refused")
    assert [(line["error"], line["unchanged"]) for line in lines] == [(error, True)] * 2
    assert await cached(sessionmaker) is None, "nothing of the refused file was imported"

    register.body = REGISTER.read_bytes()  # the publisher fixes the file
    assert await refresh_round(sessionmaker, restarted, now=utcnow()) == INTERVAL
    assert await cached(sessionmaker) is not None
    async with sessionmaker() as session:
        assert await service.refused_file(session, environment=Environment.live, url=register.url) is None


async def test_without_validators_a_refused_file_sent_again_is_recognised_and_not_read(
    sessionmaker: Maker, register: RegisterServer, capfd: pytest.CaptureFixture[str]
) -> None:
    configure_logging("info")
    register.validators = False
    register.body, error = BAD_FILES["100,000 nested ["]
    schedule = RefreshSchedule(register.url, INTERVAL)
    await refresh_round(sessionmaker, schedule, now=utcnow())
    capfd.readouterr()

    await refresh_round(sessionmaker, schedule, now=utcnow())

    [line] = logged(capfd.readouterr().out, "wtta_refresh_refused")
    assert (line["error"], line["unchanged"]) == (error, True)


@pytest.mark.parametrize("url", ["http://[::1/register.csv", "http://127.0.0.1:1/\x00"])
async def test_a_url_httpx_cannot_use_fails_the_round_and_is_retried(
    sessionmaker: Maker, capfd: pytest.CaptureFixture[str], url: str
) -> None:
    configure_logging("info")
    assert await refresh_round(sessionmaker, RefreshSchedule(url, INTERVAL), now=utcnow()) == dt.timedelta(minutes=1)
    [line] = logged(capfd.readouterr().out, "wtta_refresh_failed")
    assert (line["attempt"], line["retry_in_seconds"]) == (1, 60)  # the error: httpx's, or PostgreSQL's for NUL


async def test_an_unforeseen_error_in_a_round_is_logged_and_retried_not_raised(
    register: RegisterServer, capfd: pytest.CaptureFixture[str]
) -> None:
    """Whatever goes wrong in a refresh must not end the worker, whose other loops (webhook delivery, the daily
    purges) run beside it: here the session factory makes no sessions (a TypeError, not a database error)."""
    configure_logging("info")
    broken: Maker = async_sessionmaker(class_=dict)
    assert await refresh_round(broken, RefreshSchedule(register.url, INTERVAL), now=utcnow()) == dt.timedelta(minutes=1)
    [line] = logged(capfd.readouterr().out, "wtta_refresh_failed")
    assert line["error"].startswith("TypeError: ")
    assert refreshes("failed") > 0


async def _line_with(stream: asyncio.StreamReader, event: str) -> dict[str, Any]:
    """The first JSON log line of `event` the process writes."""
    while line := await stream.readline():
        if line.startswith(b"{") and (entry := json.loads(line))["event"] == event:
            return dict(entry)
    raise AssertionError(f"the process ended without logging {event}")


@pytest.mark.parametrize("bad", ["a date before the year 1", "100,000 nested ["])
@commits
async def test_the_worker_process_survives_a_bad_register_and_keeps_delivering_webhooks(
    database_url: str, var_dir: Path, settings: Settings, sessionmaker: Maker, register: RegisterServer, bad: str
) -> None:
    """`compliance-api worker` as operators run it, with the register URL serving a file that used to kill it within
    seconds (and webhook delivery and the daily purges with it)."""
    register.body, error = BAD_FILES[bad]
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": "",
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": str(var_dir),
        "COMPLIANCE_WTTA_REGISTER_URL": register.url,
        "COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
        "COMPLIANCE_WEBHOOKS_POLL_SECONDS": "0.05",  # SQLite has no NOTIFY: the worker finds the test event by polling
    }
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "compliance_api", "worker", env=env, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert worker.stdout is not None
        refused = await asyncio.wait_for(_line_with(worker.stdout, "wtta_refresh_refused"), timeout=60)
        assert refused["error"] == error

        allowed = settings.model_copy(update={"webhooks_allow_private_targets": True})
        owner = webhooks_service.EndpointOwner((await create_user(sessionmaker)).id, Environment.live)
        async with receiving(Receiver) as receiver:
            endpoint_id = await create_webhook_endpoint(sessionmaker, allowed, owner, receiver.url)
            async with sessionmaker.begin() as session:
                await webhooks_service.send_test(session, owner, endpoint_id, now=utcnow())
            await asyncio.wait_for(receiver.arrived.wait(), timeout=60)
        assert worker.returncode is None, "still running"
    finally:
        if worker.returncode is None:
            worker.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(worker.wait(), timeout=30) == 0, "stopped cleanly by SIGTERM"
