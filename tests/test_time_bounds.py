"""Instants that exist in no UTC calendar year between 1 and 9999 are a 400 naming the field, never a 500: every
date-time the API reads goes through `kit.instants` (list filters, the replay's `since`)."""

from __future__ import annotations

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.kit.instants import InstantError, parse_instant, parse_utc
from tests.passport.conftest import make_account

Maker = async_sessionmaker[AsyncSession]

BEFORE_YEAR_1 = "0001-01-01T00:00:00+23:59"
AFTER_YEAR_9999 = "9999-12-31T23:59:59-23:59"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """A webhook endpoint on loopback: the replay needs one, nothing is delivered."""
    return settings.model_copy(update={"webhooks_allow_private_targets": True})


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        ("/v1/classifications", "created_after"),
        ("/v1/classifications", "created_before"),
        ("/v1/events", "created_after"),
    ],
)
@pytest.mark.parametrize("moment", [BEFORE_YEAR_1, AFTER_YEAR_9999])
async def test_a_list_filter_outside_the_calendar_is_400_naming_it(
    client: AsyncClient, sessionmaker: Maker, pepper: bytes, path: str, parameter: str, moment: str
) -> None:
    anna = await make_account(sessionmaker, pepper)
    answer = await client.get(path, params={parameter: moment}, headers=anna.live)
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    problem = answer.json()
    assert problem["code"] == "validation_failed"
    assert [error["field"] for error in problem["errors"]] == [f"query.{parameter}"]
    assert "between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z" in problem["errors"][0]["message"]
    assert (await client.get(path, headers=anna.live)).status_code == 200, "the connection still serves"


@pytest.mark.parametrize("moment", [BEFORE_YEAR_1, AFTER_YEAR_9999])
async def test_a_replay_since_outside_the_calendar_is_400_naming_it(
    client: AsyncClient, sessionmaker: Maker, pepper: bytes, moment: str
) -> None:
    anna = await make_account(sessionmaker, pepper)
    body = {"url": "http://127.0.0.1:9/hook", "enabled_events": ["*"]}
    endpoint = (await client.post("/v1/webhook-endpoints", json=body, headers=anna.live)).json()
    answer = await client.post(
        f"/v1/webhook-endpoints/{endpoint['id']}/replay", json={"since": moment}, headers=anna.live
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["code"] == "validation_failed"
    assert [error["field"] for error in answer.json()["errors"]] == ["since"]


async def test_instants_at_the_edges_of_the_calendar_are_accepted(
    client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    anna = await make_account(sessionmaker, pepper)
    for moment in ("0001-01-01T00:00:00Z", "0001-01-01T23:59:00+23:59", "9999-12-31T23:59:59Z"):
        answer = await client.get("/v1/classifications", params={"created_before": moment}, headers=anna.live)
        assert answer.status_code == 200, (moment, answer.text)


def test_the_parser_keeps_the_offset_and_refuses_what_has_no_utc_instant() -> None:
    assert parse_instant("2026-11-01T10:00:00+02:00").isoformat() == "2026-11-01T10:00:00+02:00"
    assert parse_utc("2026-11-01T10:00:00+02:00").isoformat() == "2026-11-01T08:00:00+00:00"
    assert parse_utc("2026-11-01", naive_is_utc=True).isoformat() == "2026-11-01T00:00:00+00:00"
    for text in (BEFORE_YEAR_1, AFTER_YEAR_9999, "2026-11-01T10:00:00", "tomorrow", "2026-02-30T00:00:00Z"):
        with pytest.raises(InstantError):
            parse_instant(text)
