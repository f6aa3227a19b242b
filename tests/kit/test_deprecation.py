"""A deprecated operation, declared once, answers with RFC 9745/8594 headers and is deprecated in the contract."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from fastapi import APIRouter, FastAPI
from httpx import ASGITransport, AsyncClient

from compliance_api import CONTRACT_VERSION
from compliance_api.config import Settings
from compliance_api.errors import ApiError
from compliance_api.kit.deprecation import deprecated, deprecation
from compliance_api.openapi.frozen import frozen_contract
from tests.conftest import running_app

NOTICE = "https://docs.example.test/changelog#old-thing"
SINCE = date(2026, 1, 1)  # 1767225600
SUNSET = date(2027, 6, 30)


def _test_routes() -> APIRouter:
    """Mounted only in this test's app, so the frozen contract never sees them."""
    router = APIRouter(prefix="/v1/test-only")

    @router.get("/old-thing", **deprecated(since=SINCE, sunset=SUNSET, link=NOTICE))
    async def old_thing(fail: bool = False) -> dict[str, str]:
        if fail:
            raise ApiError("not_found", "Nothing here.")
        return {"status": "still here"}

    @router.get("/new-thing")
    async def new_thing() -> dict[str, str]:
        return {"status": "current"}

    return router


@pytest.fixture
async def app_with_test_routes(settings: Settings, engine: object) -> AsyncIterator[FastAPI]:
    async with running_app(settings, _test_routes()) as application:
        yield application


@pytest.fixture
async def http(app_with_test_routes: FastAPI) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(transport=ASGITransport(app=app_with_test_routes), base_url="http://api.test") as client:
        yield client


async def test_deprecated_operation_answers_with_deprecation_sunset_and_link(
    http: AsyncClient, auth: dict[str, str]
) -> None:
    response = await http.get("/v1/test-only/old-thing", headers=auth)
    assert response.status_code == 200
    assert response.headers["deprecation"] == "@1767225600"
    assert response.headers["sunset"] == "Wed, 30 Jun 2027 00:00:00 GMT"
    assert response.headers["link"] == f'<{NOTICE}>; rel="deprecation"'
    assert response.headers["x-ratelimit-limit"] == "120"  # the gateway's headers are kept


async def test_deprecated_operation_keeps_its_headers_on_errors(http: AsyncClient, auth: dict[str, str]) -> None:
    for query in ("?fail=true", "?fail=notabool"):
        response = await http.get(f"/v1/test-only/old-thing{query}", headers=auth)
        assert response.status_code in (400, 404)
        assert response.headers["deprecation"] == "@1767225600"
        assert response.headers["sunset"] == "Wed, 30 Jun 2027 00:00:00 GMT"


async def test_other_operations_carry_no_deprecation_headers(http: AsyncClient, auth: dict[str, str]) -> None:
    response = await http.get("/v1/test-only/new-thing", headers=auth)
    assert response.status_code == 200
    assert not {"deprecation", "sunset", "link"} & set(response.headers)


async def test_contract_marks_the_operation_deprecated_with_its_headers(app_with_test_routes: FastAPI) -> None:
    paths: dict[str, Any] = app_with_test_routes.openapi()["paths"]
    operation = paths["/v1/test-only/old-thing"]["get"]
    assert operation["deprecated"] is True
    assert operation["x-deprecation"] == {
        "since": "2026-01-01T00:00:00+00:00",
        "sunset": "2027-06-30T00:00:00+00:00",
        "link": NOTICE,
    }
    assert NOTICE in operation["description"]
    assert {"Deprecation", "Sunset", "Link"} <= set(operation["responses"]["200"]["headers"])
    assert "Deprecation" not in operation["responses"]["401"]["headers"]
    assert "deprecated" not in paths["/v1/test-only/new-thing"]["get"]


def test_the_production_contract_deprecates_nothing_yet() -> None:
    """The test-only routes above never reach the frozen contract."""
    contract = frozen_contract(CONTRACT_VERSION)
    assert contract is not None
    assert not any(op.get("deprecated") for item in contract["paths"].values() for op in item.values())


@pytest.mark.parametrize(
    "sunset",
    [SINCE - timedelta(days=1), SINCE, SINCE + timedelta(days=89), datetime(2026, 3, 31, 23, 59, 59, tzinfo=UTC)],
)
def test_a_sunset_less_than_90_days_after_the_deprecation_is_refused(sunset: date) -> None:
    with pytest.raises(ValueError, match="at least 90 days"):
        deprecation(since=SINCE, sunset=sunset, link=NOTICE)


def test_a_sunset_90_days_after_the_deprecation_is_accepted() -> None:
    assert deprecation(since=SINCE, sunset=SINCE + timedelta(days=90), link=NOTICE).sunset == datetime(
        2026, 4, 1, tzinfo=UTC
    )


@pytest.mark.parametrize("link", ["", "https://x.test/a b", 'https://x.test/">'])
def test_a_deprecation_needs_a_clean_notice_link(link: str) -> None:
    with pytest.raises(ValueError, match="link"):
        deprecation(since=SINCE, sunset=SUNSET, link=link)


def test_naive_datetimes_are_refused_and_aware_ones_kept_to_the_second() -> None:
    with pytest.raises(ValueError, match="timezone"):
        deprecation(since=datetime(2026, 1, 1), sunset=SUNSET, link=NOTICE)
    notice = deprecation(since=datetime(2026, 1, 1, 12, 30, tzinfo=UTC), sunset=SUNSET, link=NOTICE)
    assert dict(notice.headers())[b"deprecation"] == b"@1767270600"
