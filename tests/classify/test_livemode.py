"""`livemode` on every classification object: verdicts, batch items, list items, records, catalogues; a verdict kept
before verdicts said it reads its environment's."""

from __future__ import annotations

import uuid

from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify.models import Classification
from tests.classify.conftest import Account

ZW = "/v1/classify/zelfstandigenwet"
BODY = {"engagement": {"hourly_rate_eur": 95}}


async def test_every_classification_object_says_its_environment(
    client: AsyncClient, sandbox_client: AsyncClient, account: Account
) -> None:
    for http, headers, livemode in ((client, account.live, True), (sandbox_client, account.test, False)):
        verdict = (await http.post(ZW, json=BODY, headers=headers)).json()
        assert verdict["livemode"] is livemode
        batch = (await http.post(f"{ZW}/batch", json={"items": [BODY]}, headers=headers)).json()
        assert [item["livemode"] for item in batch["data"]] == [livemode]
        listed = (await http.get("/v1/classifications", headers=headers)).json()["data"]
        assert {item["livemode"] for item in listed} == {livemode}
        record = (await http.get(f"/v1/classifications/{verdict['id']}", headers=headers)).json()
        assert (record["livemode"], record["result"]["livemode"]) == (livemode, livemode)
        for path, params in (("/v1/classify/questions", {"test": "NL"}), ("/v1/classify/cross-border/criteria", {})):
            catalogue = await http.get(path, params=params or {"country": "BE"}, headers=headers)
            assert catalogue.json()["livemode"] is livemode, path


async def test_a_verdict_kept_before_livemode_reads_its_environments(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], account: Account
) -> None:
    verdict = (await client.post(ZW, json=BODY, headers=account.live)).json()
    async with sessionmaker.begin() as session:
        row = await session.get_one(Classification, uuid.UUID(verdict["id"]))
        row.result = {name: value for name, value in row.result.items() if name != "livemode"}
    record = (await client.get(f"/v1/classifications/{verdict['id']}", headers=account.live)).json()
    assert record["result"]["livemode"] is True
