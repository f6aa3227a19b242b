"""Environment hints: the caller's own id or an active share-token sent to the wrong environment is a 404
`in_other_environment` naming the environment and its base URL; anyone else's is the 404 of an unknown one."""

from __future__ import annotations

from httpx import AsyncClient, Response
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import UserKind
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.dac7.conftest import give_grant, make_seller
from tests.passport.conftest import Account, give_passport, make_account

Maker = async_sessionmaker[AsyncSession]
BODY = {"engagement": {"hourly_rate_eur": 95}}


def _assert_points_to_the_sandbox(answer: Response, what: str) -> None:
    """A 404 `in_other_environment` saying the caller's `what` lives in the sandbox, and where that is."""
    assert answer.status_code == 404, answer.text
    problem = answer.json()
    assert (problem["code"], problem["environment"], problem["base_url"]) == (
        "in_other_environment",
        "test",
        "http://sandbox.localhost",
    )
    assert problem["detail"] == (
        f"This {what} is yours in the sandbox, not here: send the request to the sandbox's base URL, "
        "http://sandbox.localhost."
    )


async def test_an_own_sandbox_id_sent_to_production_says_where_it_belongs(
    client: AsyncClient, sandbox_client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    owner = await make_account(sessionmaker, pepper)
    made = (await sandbox_client.post("/v1/classify/zelfstandigenwet", json=BODY, headers=owner.test)).json()
    for path in (f"/v1/classifications/{made['id']}", f"/v1/classifications/{made['id']}/dossier"):
        _assert_points_to_the_sandbox(await client.get(path, headers=owner.live), "classification")
    other = await make_account(sessionmaker, pepper)
    strangers = await client.get(f"/v1/classifications/{made['id']}", headers=other.live)
    assert (strangers.status_code, strangers.json()["code"]) == (404, "not_found")
    assert "environment" not in strangers.json()


async def test_an_own_production_webhook_endpoint_sent_to_the_sandbox_says_where_it_belongs(
    client: AsyncClient, sandbox_client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    owner = await make_account(sessionmaker, pepper)
    body = {"url": "https://hooks.example.com/in", "enabled_events": ["*"]}
    endpoint = (await client.post("/v1/webhook-endpoints", json=body, headers=owner.live)).json()
    answer = await sandbox_client.get(f"/v1/webhook-endpoints/{endpoint['id']}/deliveries", headers=owner.test)
    assert (answer.status_code, answer.json()["code"]) == (404, "in_other_environment")
    assert (answer.json()["environment"], answer.json()["base_url"]) == ("live", "http://api.test")
    assert answer.json()["detail"] == (
        "This webhook endpoint is yours in production, not here: send the request to production's base URL, "
        "http://api.test."
    )
    other = await make_account(sessionmaker, pepper)
    strangers = await sandbox_client.get(f"/v1/webhook-endpoints/{endpoint['id']}", headers=other.test)
    assert strangers.json()["code"] == "webhook_endpoint_not_found"


async def test_an_own_sandbox_event_read_in_production_says_where_it_belongs(
    client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    owner = await make_account(sessionmaker, pepper)
    payload = {
        "freelancer_id": str(owner.user.id),
        "updated_at": utcnow().isoformat(),
        "change": "sector",
        "sector": "ict",
    }
    async with sessionmaker.begin() as session:
        event_id = await events.emit(
            session, environment=Environment.test, type=EventName.PASSPORT_UPDATED, payload=payload
        )
    _assert_points_to_the_sandbox(await client.get(f"/v1/events/{event_id}", headers=owner.live), "event")
    other = await make_account(sessionmaker, pepper)
    strangers = await client.get(f"/v1/events/{event_id}", headers=other.live)
    assert (strangers.status_code, strangers.json()["code"]) == (404, "event_not_found")


async def test_an_own_production_dac7_grant_revoked_in_the_sandbox_says_where_it_belongs(
    client: AsyncClient, sandbox_client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    seller = await make_account(sessionmaker, pepper)
    for environment in Environment:
        await make_seller(sessionmaker, seller.user, environment)
    grantee = await make_account(sessionmaker, pepper, UserKind.business)
    grant_id = await give_grant(sessionmaker, seller.user, grantee.user, Environment.live)
    answer = await sandbox_client.delete(f"/v1/dac7/grants/{grant_id}", headers=seller.test)
    assert answer.status_code == 404, answer.text
    problem = answer.json()
    assert (problem["code"], problem["environment"], problem["base_url"]) == (
        "in_other_environment",
        "live",
        "http://api.test",
    )
    assert problem["detail"] == (
        "This DAC7 grant is yours in production, not here: send the request to production's base URL, http://api.test."
    )
    listed = (await client.get("/v1/dac7/grants", headers=seller.live)).json()["data"]
    assert [(g["id"], g["status"]) for g in listed] == [(str(grant_id), "active")], "the hint revoked nothing"
    other = await make_account(sessionmaker, pepper)
    await make_seller(sessionmaker, other.user, Environment.test)
    strangers = await sandbox_client.delete(f"/v1/dac7/grants/{grant_id}", headers=other.test)
    assert (strangers.status_code, strangers.json()["code"]) == (404, "grant_not_found")


async def _share(sandbox_client: AsyncClient, owner: Account) -> dict[str, str]:
    created = await sandbox_client.post("/v1/passport/shares", json={"ttl_days": 5}, headers=owner.test)
    assert created.status_code == 201, created.text
    share: dict[str, str] = created.json()
    return share


async def test_an_active_sandbox_share_token_verified_in_production_says_where_it_works(
    client: AsyncClient, sandbox_client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    freelancer = await make_account(sessionmaker, pepper)
    await give_passport(sessionmaker, freelancer.user, environment=Environment.test)
    share = await _share(sandbox_client, freelancer)
    verifier = await make_account(sessionmaker, pepper, UserKind.business)
    answer = await client.get(f"/v1/passport/{share['token']}/verify", headers=verifier.live)
    assert (answer.status_code, answer.json()["code"], answer.json()["environment"]) == (
        404,
        "in_other_environment",
        "test",
    )
    revoked = await sandbox_client.delete(f"/v1/passport/shares/{share['id']}", headers=freelancer.test)
    assert revoked.status_code == 200
    after = await client.get(f"/v1/passport/{share['token']}/verify", headers=verifier.live)
    assert (after.status_code, after.json()["code"]) == (404, "share_not_found"), "a revoked one says nothing"
    unknown = await client.get("/v1/passport/pst_00000000000000000000000000000000/verify", headers=verifier.live)
    assert unknown.json()["code"] == "share_not_found"
