from __future__ import annotations

import json

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.app import create_app
from compliance_api.config import Settings
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
