"""Dispatch hands every outbox event on: events some endpoint subscribes to become deliveries, the others are marked
dispatched in one statement, without deliveries, whatever their order in the outbox."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.events import service as events
from compliance_api.events.models import OutboxEvent
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import service
from compliance_api.webhooks.delivery import dispatch
from compliance_api.webhooks.models import WebhookDelivery
from tests.factories import create_user, create_webhook_endpoint

Maker = async_sessionmaker[AsyncSession]
ADMISSION = {"kvk_number": "99000003", "from_status": "admitted", "to_status": "withdrawn"}


async def _endpoint(sessionmaker: Maker, settings: Settings, environment: Environment, wanted: list[str]) -> uuid.UUID:
    owner = service.EndpointOwner((await create_user(sessionmaker)).id, environment)
    return await create_webhook_endpoint(sessionmaker, settings, owner, enabled_events=tuple(wanted))


async def _emit(sessionmaker: Maker, environment: Environment, name: EventName, payload: dict[str, Any]) -> uuid.UUID:
    async with sessionmaker.begin() as session:
        return await events.emit(session, environment=environment, type=name, payload=payload)


async def _viewed(sessionmaker: Maker, environment: Environment) -> uuid.UUID:
    payload = {"freelancer_id": str(uuid.uuid4()), "share_id": str(uuid.uuid4()), "viewer_id": str(uuid.uuid4())}
    return await _emit(sessionmaker, environment, EventName.PASSPORT_SHARE_VIEWED, payload)


async def _state(sessionmaker: Maker) -> tuple[set[uuid.UUID], dict[uuid.UUID, uuid.UUID]]:
    """(events not yet dispatched, event → endpoint of each delivery)."""
    async with sessionmaker() as session:
        waiting = set(await session.scalars(select(OutboxEvent.id).where(OutboxEvent.delivered_at.is_(None))))
        deliveries = {d.event_id: d.endpoint_id for d in await session.scalars(select(WebhookDelivery))}
    return waiting, deliveries


async def test_unsubscribed_events_are_handed_on_without_deliveries_and_subscribed_ones_delivered(
    sessionmaker: Maker, settings: Settings
) -> None:
    live = await _endpoint(sessionmaker, settings, Environment.live, ["wtta.admission.updated"])
    sandbox = await _endpoint(sessionmaker, settings, Environment.test, ["*"])
    unwanted = [await _viewed(sessionmaker, Environment.live) for _ in range(3)]
    admission = await _emit(sessionmaker, Environment.live, EventName.WTTA_ADMISSION_UPDATED, ADMISSION)
    sandbox_admission = await _emit(sessionmaker, Environment.test, EventName.WTTA_ADMISSION_UPDATED, ADMISSION)
    async with sessionmaker.begin() as session:
        handled = await dispatch(session, batch=2, now=utcnow())
    assert handled == 4, "2 unsubscribed handed on, then the 2 oldest of the rest"
    waiting, deliveries = await _state(sessionmaker)
    assert waiting == {sandbox_admission}
    assert deliveries == {admission: live}
    async with sessionmaker.begin() as session:
        assert await dispatch(session, batch=2, now=utcnow()) == 1
        assert await dispatch(session, batch=2, now=utcnow()) == 0
    waiting, deliveries = await _state(sessionmaker)
    assert waiting == set()
    assert deliveries == {admission: live, sandbox_admission: sandbox}
    assert not set(unwanted) & set(deliveries)


async def test_without_any_endpoint_every_event_is_handed_on(sessionmaker: Maker) -> None:
    emitted = {await _viewed(sessionmaker, environment) for environment in (Environment.live, Environment.test)}
    async with sessionmaker.begin() as session:
        assert await dispatch(session, batch=10, now=utcnow()) == len(emitted)
    assert await _state(sessionmaker) == (set(), {})


async def test_an_endpoint_of_the_other_environment_does_not_keep_an_event(
    sessionmaker: Maker, settings: Settings
) -> None:
    await _endpoint(sessionmaker, settings, Environment.test, ["*"])
    live_admission = await _emit(sessionmaker, Environment.live, EventName.WTTA_ADMISSION_UPDATED, ADMISSION)
    async with sessionmaker.begin() as session:
        assert await dispatch(session, batch=10, now=utcnow()) == 1
    waiting, deliveries = await _state(sessionmaker)
    assert live_admission not in waiting
    assert deliveries == {}
