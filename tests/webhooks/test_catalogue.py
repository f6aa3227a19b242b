"""The event catalogue in the contract, and the embedded worker inside the API process."""

from __future__ import annotations

from httpx import ASGITransport, AsyncClient

from compliance_api import CONTRACT_VERSION
from compliance_api.app import create_app
from compliance_api.config import Settings
from compliance_api.openapi.frozen import frozen_contract
from compliance_api.webhooks.catalogue import EVENT_TYPES
from tests.factories import bearer, create_token
from tests.webhooks.receiver import Receiver

REQUIRED = {
    "wtta.admission.updated",
    "passport.updated",
    "passport.share.viewed",
    "dac7.snapshot.updated",
    "classification.created",
    "api_token.created",
    "api_token.revoked",
    "webhook.test",
}


def test_every_event_type_is_in_the_contract_with_its_payload_schema() -> None:
    contract = frozen_contract(CONTRACT_VERSION)
    assert contract is not None
    assert set(contract["webhooks"]) == set(EVENT_TYPES) >= REQUIRED
    schemas = contract["components"]["schemas"]
    for name, item in contract["webhooks"].items():
        ref = item["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        envelope = schemas[ref.rsplit("/", 1)[1]]
        assert set(envelope["required"]) == {"id", "type", "created_at", "environment", "livemode", "data"}, name
        assert envelope["properties"]["type"]["const"] == name
    dac7 = schemas["Dac7SnapshotUpdated"]["properties"]
    assert set(dac7) == {"freelancer_id", "year", "total_consideration", "currency", "number_of_activities"}


async def test_the_embedded_worker_delivers_from_inside_the_api_process(
    settings: Settings, pepper: bytes, receiver: Receiver, engine: object
) -> None:
    embedded = settings.model_copy(update={"webhooks_embedded_worker": True, "webhooks_poll_seconds": 0.05})
    app = create_app(embedded)
    async with (
        app.router.lifespan_context(app),
        AsyncClient(transport=ASGITransport(app=app), base_url="http://api.test") as client,
    ):
        _, token = await create_token(app.state.services.sessionmaker, pepper)
        made = await client.post(
            "/v1/webhook-endpoints", json={"url": receiver.url, "enabled_events": ["*"]}, headers=bearer(token)
        )
        test = await client.post(f"/v1/webhook-endpoints/{made.json()['id']}/test", headers=bearer(token))
        path = f"/v1/webhook-endpoints/{made.json()['id']}/deliveries"
        while (await client.get(path, headers=bearer(token))).json()["data"][0]["status"] == "pending":
            await receiver.arrived.wait()
    assert test.status_code == 202
    assert [r.headers["webhook-id"] for r in receiver.received] == [test.json()["event_id"]]
