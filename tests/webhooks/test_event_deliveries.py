"""`deliveries_of_events`: an event's deliveries to one owner's endpoints only, with their attempt logs (the
dashboard's event log). An environment-wide event is delivered to every account's endpoints: each sees its own."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import service
from compliance_api.webhooks.delivery import dispatch
from compliance_api.webhooks.worker import Worker
from tests.factories import create_user, create_webhook_endpoint
from tests.webhooks.receiver import Receiver

ADMISSION = {
    "kvk_number": "99000003",
    "legal_name": "Demo B.V.",
    "from_status": "admitted",
    "to_status": "withdrawn",
    "changed_at": "2026-11-25T06:00:00+00:00",
    "source": "test",
}


async def test_each_owner_sees_only_the_deliveries_to_its_own_endpoints(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, receiver: Receiver, worker: Worker
) -> None:
    anna = service.EndpointOwner((await create_user(sessionmaker)).id, Environment.live)
    ben = service.EndpointOwner((await create_user(sessionmaker)).id, Environment.live)
    anna_endpoint = await create_webhook_endpoint(sessionmaker, settings, anna, receiver.url + "/anna")
    await create_webhook_endpoint(sessionmaker, settings, ben, receiver.url + "/ben")
    async with sessionmaker.begin() as session:
        event_id = await events.emit(
            session, environment=Environment.live, type=EventName.WTTA_ADMISSION_UPDATED, payload=ADMISSION
        )
        other = await events.emit(
            session, environment=Environment.live, type=EventName.WTTA_ADMISSION_UPDATED, payload=ADMISSION
        )
    assert await worker.run_once() == 4

    async with sessionmaker() as session:
        seen = await service.deliveries_of_events(session, anna, [event_id])
        [delivered] = seen[event_id]
        assert list(seen) == [event_id], "only the events asked for"
        assert delivered.delivery.endpoint_id == anna_endpoint
        assert delivered.endpoint_url == receiver.url + "/anna"
        assert [(a.number, a.status_code) for a in delivered.attempts] == [(1, 200)]
        ben_sees = await service.deliveries_of_events(session, ben, [event_id, other])
        assert {d.endpoint_url for found in ben_sees.values() for d in found} == {receiver.url + "/ben"}
        sandbox = service.EndpointOwner(anna.user_id, Environment.test)
        assert await service.deliveries_of_events(session, sandbox, [event_id]) == {event_id: []}
        assert await service.deliveries_of_events(session, anna, []) == {}


async def test_an_event_not_yet_handed_on_has_no_delivery(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    anna = service.EndpointOwner((await create_user(sessionmaker)).id, Environment.live)
    await create_webhook_endpoint(sessionmaker, settings, anna, "https://hooks.example.com/in")
    async with sessionmaker.begin() as session:
        event_id = await events.emit(
            session, environment=Environment.live, type=EventName.WTTA_ADMISSION_UPDATED, payload=ADMISSION
        )
        assert await service.deliveries_of_events(session, anna, [event_id]) == {event_id: []}
        await dispatch(session, batch=10, now=utcnow())
        [pending] = (await service.deliveries_of_events(session, anna, [event_id]))[event_id]
        assert pending.attempts == []
        assert pending.delivery.status.value == "pending"
