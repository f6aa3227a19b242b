"""`/freelancer/events`: the signed-in user's event log per environment (the events of `GET /v1/events`), each with
its deliveries to the user's endpoints and their attempts, and a page per event."""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.responses import Response

from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import service as webhooks_service
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.worker import Worker
from tests.conftest import CURSORS
from tests.dashboard.conftest import signed_up_user
from tests.factories import bearer, create_token, create_webhook_endpoint
from tests.webhooks.receiver import Receiver, receiving

PAGE = "/freelancer/events"
ZW = "/v1/classify/zelfstandigenwet"
CREATED = "classification.created"
ROW_ID = re.compile(r'data-event-id="([0-9a-f-]{36})"')
OLDER = re.compile(r'href="(/freelancer/events\?[^"]*cursor=[^"]+)" rel="next"')


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Private targets allowed: the test receiver listens on loopback."""
    return settings.model_copy(update={"webhooks_allow_private_targets": True})


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with receiving(Receiver) as box:
        yield box


@pytest.fixture
async def worker(settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncIterator[Worker]:
    delivery = Worker(settings, sessionmaker, SecretBox(settings.secret_key_bytes()))
    yield delivery
    await delivery.close()


async def _classified(api: AsyncClient, headers: dict[str, str], reference: str) -> dict[str, Any]:
    answer = await api.post(ZW, json={"engagement": {}, "reference": reference}, headers=headers)
    assert answer.status_code == 200, answer.text
    made: dict[str, Any] = answer.json()
    return made


async def _event_ids(api: AsyncClient, headers: dict[str, str], **params: str) -> list[str]:
    listed = await api.get("/v1/events", params=params, headers=headers)
    assert listed.status_code == 200, listed.text
    return [item["id"] for item in listed.json()["data"]]


async def test_events_are_listed_with_their_deliveries_and_attempts(
    browser: AsyncClient,
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: Settings,
    pepper: bytes,
    receiver: Receiver,
    worker: Worker,
) -> None:
    fay = await signed_up_user(browser, sessionmaker, "fay@example.com")
    _, token = await create_token(sessionmaker, pepper, user=fay)
    owner = webhooks_service.EndpointOwner(fay.id, Environment.live)
    endpoint_id = await create_webhook_endpoint(sessionmaker, settings, owner, receiver.url)
    made = await _classified(client, bearer(token), "first")
    receiver.answers.append(Response("busy", status_code=503))
    await worker.run_once()
    async with sessionmaker.begin() as session:
        [delivery] = (
            await webhooks_service.list_deliveries(session, owner, endpoint_id, limit=5, cursors=CURSORS)
        ).rows
        await webhooks_service.retry(session, owner, endpoint_id, delivery.id, now=utcnow())
    await worker.run_once()

    [event_id] = await _event_ids(client, bearer(token), type=CREATED)
    listed = (await browser.get(PAGE, params={"type": CREATED})).text
    assert ROW_ID.findall(listed) == [event_id]
    row = listed[listed.index(f'data-event-id="{event_id}"') :]
    assert "classification.created" in row[:600]
    assert "succeeded</span> to <code>" + receiver.url in html.unescape(row), "status and endpoint"
    assert "2 attempts (last: 200)" in row
    page = await browser.get(f"{PAGE}/live/{event_id}")
    assert page.status_code == 200
    text = html.unescape(page.text)
    assert f'"classification_id": "{made["id"]}"' in text, "the event's data as its deliveries carry it"
    attempts = re.findall(r"<tr><td>(\d)</td><td><time[^>]*>[^<]*</time></td><td>(\d+|none)</td>", text)
    assert attempts == [("1", "503"), ("1", "200")], "every attempt of the log, oldest first"


async def test_the_log_shows_nothing_of_another_account_or_the_other_environment(
    browser: AsyncClient,
    other_browser: AsyncClient,
    client: AsyncClient,
    sandbox_client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
) -> None:
    fay = await signed_up_user(browser, sessionmaker, "fay@example.com")
    _, live = await create_token(sessionmaker, pepper, user=fay)
    _, test = await create_token(sessionmaker, pepper, user=fay, environment=Environment.test)
    await _classified(client, bearer(live), "live-one")
    await _classified(sandbox_client, bearer(test), "sandbox-one")
    await signed_up_user(other_browser, sessionmaker, "bob@example.com")
    [live_event] = await _event_ids(client, bearer(live), type=CREATED)
    [sandbox_event] = await _event_ids(sandbox_client, bearer(test), type=CREATED)
    live_ids = await _event_ids(client, bearer(live))
    sandbox_ids = await _event_ids(sandbox_client, bearer(test))
    assert not set(live_ids) & set(sandbox_ids)

    assert ROW_ID.findall((await browser.get(PAGE)).text) == live_ids
    assert ROW_ID.findall((await browser.get(PAGE, params={"environment": "test"})).text) == sandbox_ids
    for environment in ("live", "test"):
        seen = ROW_ID.findall((await other_browser.get(PAGE, params={"environment": environment})).text)
        assert not set(seen) & {*live_ids, *sandbox_ids}
    for path in (f"{PAGE}/live/{live_event}", f"{PAGE}/test/{sandbox_event}"):
        assert (await browser.get(path)).status_code == 200
        refused = await other_browser.get(path)
        assert refused.status_code == 404
        assert "-one" not in refused.text
    assert (await browser.get(f"{PAGE}/test/{live_event}")).status_code == 404
    assert (await browser.get(f"{PAGE}/live/{uuid.uuid4()}")).status_code == 404


async def test_filters_and_pages_select_what_the_api_selects(
    browser: AsyncClient, client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    fay = await signed_up_user(browser, sessionmaker, "fay@example.com")
    _, live = await create_token(sessionmaker, pepper, user=fay)
    middle = None
    for i in range(22):
        await _classified(client, bearer(live), f"r{i}")
        if i == 10:
            middle = utcnow()
    assert middle is not None
    everything = await _event_ids(client, bearer(live), limit="100")
    first = (await browser.get(PAGE)).text
    older = OLDER.search(first)
    assert older is not None
    second = (await browser.get(html.unescape(older.group(1)))).text
    assert ROW_ID.findall(first) + ROW_ID.findall(second) == everything
    after = await browser.get(PAGE, params={"created_after": middle.isoformat()})
    assert ROW_ID.findall(after.text) == await _event_ids(client, bearer(live), created_after=middle.isoformat())
    chosen = await browser.get(PAGE, params={"type": "passport.updated"})
    assert chosen.status_code == 200
    assert ROW_ID.findall(chosen.text) == []
    assert "match these filters" in chosen.text
    both = await browser.get(PAGE, params=[("type", "passport.updated"), ("type", "classification.created")])
    assert len(ROW_ID.findall(both.text)) == 20


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"type": "webhook.test"}, "“Types” must be one of the choices"),
        ({"type": "nothing"}, "“Types” must be one of the choices"),
        ({"created_after": "last week"}, "“Created after” must be a date and time"),
        ({"created_after": "0001-01-01T00:00:00+23:59"}, "“Created after” must lie between"),
        ({"created_after": "9999-12-31T23:59:59-23:59"}, "“Created after” must lie between"),
        ({"environment": "staging"}, "“Environment” must be one of the choices"),
        ({"cursor": "bm90IG91cnM"}, "This page link belongs to another list"),
    ],
)
async def test_a_bad_filter_is_a_400_with_a_message_at_the_form(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], params: dict[str, str], message: str
) -> None:
    await signed_up_user(browser, sessionmaker, "fay@example.com")
    shown = await browser.get(PAGE, params=params)
    assert shown.status_code == 400
    alert = re.search(r'<p class="error" role="alert" id="form-error">([^<]*)</p>', shown.text)
    assert alert is not None
    assert message in html.unescape(alert.group(1))
    assert 'name="created_after"' in shown.text
