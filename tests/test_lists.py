"""Every list answers in one convention: `limit` and `cursor` in, `{"data", "has_more", "next_cursor"}` out, newest
first, in keyset pages; a cursor of another list, or not one at all, is a 400 naming `query.cursor`."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import uuid
from collections.abc import Awaitable, Callable

import pytest
from fastapi.routing import APIRoute
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import UserKind
from compliance_api.api import API_ROUTERS
from compliance_api.config import Settings
from compliance_api.kit.strict_query import StrictQueryRoute
from tests.conftest import commits
from tests.dac7.conftest import make_seller
from tests.factories import create_token
from tests.passport.conftest import Account, give_passport, make_account

ListMaker = Callable[[AsyncClient, Account, async_sessionmaker[AsyncSession], bytes], Awaitable[str]]
"""Creates three items of one list for `Account` through the API and answers the list's path."""


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Webhook endpoints on loopback: nothing is delivered in these tests, the deliveries only need to exist."""
    return settings.model_copy(update={"webhooks_allow_private_targets": True})


async def _shares(client: AsyncClient, owner: Account, maker: async_sessionmaker[AsyncSession], pepper: bytes) -> str:
    await give_passport(maker, owner.user)
    for days in (5, 6, 7):
        assert (
            await client.post("/v1/passport/shares", json={"ttl_days": days}, headers=owner.live)
        ).status_code == 201
    return "/v1/passport/shares"


async def _views(client: AsyncClient, owner: Account, maker: async_sessionmaker[AsyncSession], pepper: bytes) -> str:
    await give_passport(maker, owner.user)
    created = (await client.post("/v1/passport/shares", json={"ttl_days": 5}, headers=owner.live)).json()
    verifier = await make_account(maker, pepper, UserKind.business)
    for _ in range(3):
        path = f"/v1/passport/{created['token']}/verify"
        assert (await client.get(path, headers=verifier.live)).status_code == 200
    return f"/v1/passport/shares/{created['id']}/views"


async def _grants(client: AsyncClient, owner: Account, maker: async_sessionmaker[AsyncSession], pepper: bytes) -> str:
    await make_seller(maker, owner.user)
    for _ in range(3):
        grantee = await make_account(maker, pepper, UserKind.business)
        body = {"grantee_id": str(grantee.user.id)}
        assert (await client.post("/v1/dac7/grants", json=body, headers=owner.live)).status_code == 201
    return "/v1/dac7/grants"


async def _endpoint(client: AsyncClient, owner: Account, number: int) -> str:
    body = {"url": f"http://127.0.0.1:9/hook-{number}", "enabled_events": ["*"]}
    created = await client.post("/v1/webhook-endpoints", json=body, headers=owner.live)
    assert created.status_code == 201
    return str(created.json()["id"])


async def _endpoints(
    client: AsyncClient, owner: Account, maker: async_sessionmaker[AsyncSession], pepper: bytes
) -> str:
    for number in range(3):
        await _endpoint(client, owner, number)
    return "/v1/webhook-endpoints"


async def _deliveries(
    client: AsyncClient, owner: Account, maker: async_sessionmaker[AsyncSession], pepper: bytes
) -> str:
    endpoint_id = await _endpoint(client, owner, 0)
    for _ in range(3):
        sent = await client.post(f"/v1/webhook-endpoints/{endpoint_id}/test", headers=owner.live)
        assert sent.status_code == 202
    return f"/v1/webhook-endpoints/{endpoint_id}/deliveries"


async def _classifications(
    client: AsyncClient, owner: Account, maker: async_sessionmaker[AsyncSession], pepper: bytes
) -> str:
    for rate in (30, 40, 50):
        body = {"country": "BE", "criteria": {}, "reference": f"rate-{rate}"}
        assert (await client.post("/v1/classify/cross-border", json=body, headers=owner.live)).status_code == 200
    return "/v1/classifications"


async def _events(client: AsyncClient, owner: Account, maker: async_sessionmaker[AsyncSession], pepper: bytes) -> str:
    for _ in range(2):  # with the account's own live token: three `api_token.created`
        await create_token(maker, pepper, user=owner.user)
    return "/v1/events?type=api_token.created"


LISTS: dict[str, ListMaker] = {
    "passport shares": _shares,
    "share views": _views,
    "DAC7 grants": _grants,
    "webhook endpoints": _endpoints,
    "webhook deliveries": _deliveries,
    "classifications": _classifications,
    "events": _events,
}
READ_BY_THE_HOT_PATH = {"share views"}
"""Lists whose items a test makes through the passport's hot path, which reads on connections of its own."""
NAMES = [pytest.param(name, id=name, marks=commits if name in READ_BY_THE_HOT_PATH else ()) for name in LISTS]


@pytest.mark.parametrize("name", NAMES)
async def test_a_list_pages_newest_first_with_a_cursor(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, name: str
) -> None:
    owner = await make_account(sessionmaker, pepper)
    path = await LISTS[name](client, owner, sessionmaker, pepper)
    everything = (await client.get(path, params={"limit": 100}, headers=owner.live)).json()
    assert len(everything["data"]) == 3
    assert (everything["has_more"], everything["next_cursor"]) == (False, None)

    first = (await client.get(path, params={"limit": 2}, headers=owner.live)).json()
    assert first["has_more"] is True
    second = (await client.get(path, params={"limit": 2, "cursor": first["next_cursor"]}, headers=owner.live)).json()
    assert (second["has_more"], second["next_cursor"]) == (False, None)
    assert first["data"] + second["data"] == everything["data"]
    stamps = [item.get("created_at") or item.get("viewed_at") for item in everything["data"]]
    assert stamps == sorted(stamps, reverse=True)


@pytest.mark.parametrize("name", NAMES)
async def test_a_cursor_of_another_list_or_none_at_all_is_400(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, name: str
) -> None:
    owner = await make_account(sessionmaker, pepper)
    path = await LISTS[name](client, owner, sessionmaker, pepper)
    other = "/v1/classifications" if name != "classifications" else "/v1/webhook-endpoints"
    if other == "/v1/webhook-endpoints":
        await _endpoints(client, owner, sessionmaker, pepper)
    else:
        await _classifications(client, owner, sessionmaker, pepper)
    foreign = (await client.get(other, params={"limit": 1}, headers=owner.live)).json()["next_cursor"]
    for cursor in (foreign, "not-a-cursor", "e30"):
        answer = await client.get(path, params={"cursor": cursor}, headers=owner.live)
        assert answer.status_code == 400, cursor
        assert [e["field"] for e in answer.json()["errors"]] == ["query.cursor"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("limit", ["0", "101", "ten"])
async def test_a_limit_outside_1_to_100_is_400(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, name: str, limit: str
) -> None:
    owner = await make_account(sessionmaker, pepper)
    path = await LISTS[name](client, owner, sessionmaker, pepper)
    answer = await client.get(path, params={"limit": limit}, headers=owner.live)
    assert answer.status_code == 400
    assert [e["field"] for e in answer.json()["errors"]] == ["query.limit"]


def _unsigned_cursor(moment: str, scope: str) -> str:
    """A cursor as anyone could build one without the server secret: the key in clear and a hash of the list."""
    fingerprint = hashlib.sha256(scope.encode()).hexdigest()[:16]
    raw = json.dumps({"t": moment, "i": str(uuid.uuid4()), "s": fingerprint}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize("moment", ["2999-01-01T00:00:00+00:00", "0001-01-01T00:00:00+23:59"])
async def test_a_cursor_built_without_the_server_secret_is_400(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, moment: str
) -> None:
    owner = await make_account(sessionmaker, pepper)
    path = await _classifications(client, owner, sessionmaker, pepper)
    forged = _unsigned_cursor(moment, f"classifications:{owner.user.id}:live")
    answer = await client.get(path, params={"cursor": forged}, headers=owner.live)
    assert answer.status_code == 400, answer.text
    assert [e["field"] for e in answer.json()["errors"]] == ["query.cursor"]


@pytest.mark.parametrize("name", NAMES)
async def test_a_tampered_cursor_is_400(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, name: str
) -> None:
    owner = await make_account(sessionmaker, pepper)
    path = await LISTS[name](client, owner, sessionmaker, pepper)
    cursor = (await client.get(path, params={"limit": 1}, headers=owner.live)).json()["next_cursor"]
    assert re.fullmatch(r"[A-Za-z0-9_-]+", cursor), "opaque and URL-safe"
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    for position in (0, len(raw) // 2, len(raw) - 1):
        changed = raw.copy()
        changed[position] ^= 1
        tampered = base64.urlsafe_b64encode(bytes(changed)).decode().rstrip("=")
        answer = await client.get(path, params={"cursor": tampered}, headers=owner.live)
        assert answer.status_code == 400, (position, answer.text)


async def test_a_cursor_of_the_same_list_in_the_other_environment_is_400(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    owner = await make_account(sessionmaker, pepper)
    path = await _classifications(client, owner, sessionmaker, pepper)
    cursor = (await client.get(path, params={"limit": 1}, headers=owner.live)).json()["next_cursor"]
    sandbox = {**owner.test, "Host": "sandbox.localhost"}
    answer = await client.get(path, params={"cursor": cursor}, headers=sandbox)
    assert answer.status_code == 400, answer.text


@pytest.mark.parametrize("name", [*NAMES, "requests"])
async def test_an_unknown_query_parameter_is_400_naming_it(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, name: str
) -> None:
    owner = await make_account(sessionmaker, pepper)
    path = "/v1/requests" if name == "requests" else await LISTS[name](client, owner, sessionmaker, pepper)
    answer = await client.get(path, params={"limt": "5", "zzz": "1"}, headers=owner.live)
    assert answer.status_code == 400, answer.text
    problem = answer.json()
    assert problem["code"] == "validation_failed"
    assert [e["field"] for e in problem["errors"]] == ["query.limt", "query.zzz"]
    assert problem["errors"][0]["message"] == "unknown query parameter `limt`; did you mean `limit`?"
    assert problem["errors"][1]["message"].startswith("unknown query parameter `zzz`; this operation takes ")
    assert "`cursor`" in problem["errors"][1]["message"]


async def test_a_misspelt_filter_no_longer_returns_the_whole_list(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    owner = await make_account(sessionmaker, pepper)
    await _classifications(client, owner, sessionmaker, pepper)
    answer = await client.get("/v1/classifications", params={"verdit": "unsafe"}, headers=owner.live)
    assert answer.status_code == 400
    assert answer.json()["detail"] == "unknown query parameter `verdit`; did you mean `verdict`?"


def test_every_v1_route_refuses_unknown_query_parameters() -> None:
    routes = [route for router in API_ROUTERS for route in router.routes if isinstance(route, APIRoute)]
    assert len(routes) >= 30
    for route in routes:
        assert isinstance(route, StrictQueryRoute), route.path


async def test_a_cursor_keeps_the_filters_that_issued_it_and_names_the_one_that_differs(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    owner = await make_account(sessionmaker, pepper)
    path = await _classifications(client, owner, sessionmaker, pepper)
    verdict = (await client.get(path, headers=owner.live)).json()["data"][0]["verdict"]
    other = "safe" if verdict != "safe" else "unsafe"
    first = (await client.get(path, params={"verdict": verdict, "limit": 1}, headers=owner.live)).json()
    cursor = first["next_cursor"]
    same = await client.get(path, params={"verdict": verdict, "cursor": cursor}, headers=owner.live)
    assert same.status_code == 200
    assert {item["verdict"] for item in same.json()["data"]} == {verdict}
    for params in ({"verdict": other}, {}, {"verdict": verdict, "reference": "rate-30"}):
        answer = await client.get(path, params={**params, "cursor": cursor}, headers=owner.live)
        assert answer.status_code == 400, params
        problem = answer.json()
        assert problem["code"] == "validation_failed"
        named = "reference" if "reference" in params else "verdict"
        assert [e["field"] for e in problem["errors"]] == [f"query.{named}"]
        assert problem["detail"].startswith(f"`{named}` differs from the `{named}` the cursor was issued with")


async def test_an_event_cursor_keeps_its_types_in_any_order(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    owner = await make_account(sessionmaker, pepper)
    await _events(client, owner, sessionmaker, pepper)
    both = [("type", "api_token.created"), ("type", "passport.updated")]
    cursor = (await client.get("/v1/events", params=[*both, ("limit", "1")], headers=owner.live)).json()["next_cursor"]
    reordered = await client.get("/v1/events", params=[*reversed(both), ("cursor", cursor)], headers=owner.live)
    assert reordered.status_code == 200
    assert len(reordered.json()["data"]) == 2
    fewer = await client.get("/v1/events", params=[both[0], ("cursor", cursor)], headers=owner.live)
    assert [e["field"] for e in fewer.json()["errors"]] == ["query.type"]
