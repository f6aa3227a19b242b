from __future__ import annotations

import asyncio
import io
import json
import os
import re

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.app import create_app
from compliance_api.config import Settings
from compliance_api.logging import ACCESS_LOG, AccessLog
from compliance_api.middleware import RequestIds
from tests.factories import bearer, create_token


async def test_one_json_log_line_per_request_without_the_token(
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
    capfd: pytest.CaptureFixture[str],
) -> None:
    row, token = await create_token(sessionmaker, pepper)
    capfd.readouterr()
    response = await client.get("/v1/health", headers={**bearer(token), "X-Request-Id": "trace-1"})
    refused = await client.get("/v1/health", headers=bearer(token[:-1] + ("y" if token.endswith("x") else "x")))
    ACCESS_LOG.flush()  # the last line is written at the end of this pass of the event loop
    output = capfd.readouterr().out
    assert token not in output
    assert token[8:-4] not in output
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    requests = [line for line in lines if line.get("event") == "request"]
    assert len(requests) == 2
    ok, bad = requests
    assert ok["request_id"] == "trace-1" == response.headers["x-request-id"]
    assert ok["user_id"] == str(row.user_id)
    assert (ok["environment"], ok["method"], ok["route"], ok["status"]) == ("live", "GET", "/v1/health", 200)
    assert isinstance(ok["duration_ms"], float)
    assert (bad["status"], bad["user_id"], bad["request_id"]) == (401, None, refused.headers["x-request-id"])


class CountedWrites(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data: object) -> int:
        self.writes += 1
        return super().write(data)  # type: ignore[arg-type]


async def test_the_access_log_writes_nothing_in_a_request_and_once_per_loop_pass() -> None:
    """Lines logged during one pass of the event loop are written together after it, never by the request that
    logged them: no write to stdout on a request's path, and every line written."""
    stream = CountedWrites()
    access = AccessLog(stream)
    access.request(request_id="a", status=200)
    access.request(request_id="b", status=404)
    assert stream.writes == 0
    await asyncio.sleep(0)  # the rest of this loop pass
    assert stream.writes == 1
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(line["request_id"], line["status"], line["event"], line["level"]) for line in lines] == [
        ("a", 200, "request", "info"),
        ("b", 404, "request", "info"),
    ]
    assert all(line["timestamp"].endswith("Z") for line in lines)
    access.request(request_id="c", status=200)
    access.flush()
    assert (stream.writes, stream.getvalue().count(b"\n")) == (2, 3)


def test_outside_an_event_loop_the_access_log_writes_at_once() -> None:
    stream = CountedWrites()
    AccessLog(stream).request(request_id="a", status=200)
    assert stream.writes == 1
    assert json.loads(stream.getvalue())["request_id"] == "a"


async def test_metrics_count_requests_and_rate_limit_rejections(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, token = await create_token(sessionmaker, pepper)
    await client.get("/v1/health", headers=bearer(token))
    text = (await client.get("/metrics")).text
    assert 'compliance_requests_total{method="GET",route="/v1/health",status="200"}' in text
    assert "compliance_request_duration_seconds_bucket" in text
    assert "compliance_rate_limited_total" in text


def test_the_app_logs_each_unknown_compliance_variable_at_start(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COMPLIANCE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "false")
    capfd.readouterr()
    create_app(settings)
    lines = [json.loads(line) for line in capfd.readouterr().out.splitlines() if line.startswith("{")]
    assert {
        "event": "unknown_setting",
        "level": "warning",
        "variable": "COMPLIANCE_WEBHOOK_ALLOW_PRIVATE_TARGETS",
        "did_you_mean": "COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS",
    } in [{k: v for k, v in line.items() if k != "timestamp"} for line in lines]


def test_request_ids_are_unique_and_read_from_the_os_a_batch_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """12 random bytes per id, as `secrets.token_hex(12)` gave, but one `os.urandom` call per 256 ids."""
    calls: list[int] = []
    urandom = os.urandom

    def counted(size: int) -> bytes:
        calls.append(size)
        return urandom(size)

    ids = RequestIds()
    monkeypatch.setattr(os, "urandom", counted)
    made = [ids.next() for _ in range(1000)]
    assert len(set(made)) == 1000
    assert all(re.fullmatch(r"req_[0-9a-f]{24}", made_id) for made_id in made)
    assert calls == [12 * 256] * 4


def test_a_forked_child_hands_out_ids_of_its_own() -> None:
    ids = RequestIds()
    ids.next()
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child process
        os.write(writing, ids.next().encode())
        os._exit(0)
    os.close(writing)
    in_child = os.read(reading, 64).decode()
    os.close(reading)
    os.waitpid(child, 0)
    assert in_child != ids.next()
