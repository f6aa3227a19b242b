"""`GET`/`PUT /v1/dac7/seller/{id}/identity`: the seller's own account sets it, the seller and its grant holders read
it, bad input names the field and writes nothing, and the identity is encrypted at rest and never logged."""

from __future__ import annotations

from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from structlog.testing import capture_logs

from compliance_api.dac7.models import Dac7Seller
from compliance_api.kit.environment import Environment
from tests.dac7.conftest import give_grant
from tests.passport.conftest import Account

IDENTITY: dict[str, Any] = {
    "first_name": "Sara",
    "last_name": "Jansen",
    "date_of_birth": "1991-02-03",
    "place_of_birth": {"city": "Utrecht", "country": "NL"},
    "address": {
        "country": "NL",
        "street": "Prinsengracht",
        "building": "263",
        "post_code": "1016 GV",
        "city": "Amsterdam",
    },
    "tins": [{"tin": "1112.22.333", "issued_by": "nl"}],
    "vat": "NL004495445B01",
    "financial_account": {"iban": "NL91 ABNA 0417 1643 00", "holder": "S. Jansen"},
}
SECRETS = ("111222333", "1991-02-03", "Prinsengracht", "NL91ABNA0417164300", "Jansen")


def _url(account: Account) -> str:
    return f"/v1/dac7/seller/{account.user.id}/identity"


async def test_the_seller_sets_and_reads_its_identity_stored_encrypted_and_never_logged(
    client: AsyncClient, other_freelancer: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    with capture_logs() as logs:
        put = await client.put(_url(other_freelancer), headers=other_freelancer.live, json=IDENTITY)
    assert put.status_code == 200, put.text
    body = put.json()
    assert body["tins"] == [{"tin": "111222333", "issued_by": "NL", "rule": "stdnum.nl.bsn"}]
    assert body["financial_account"]["iban"] == "NL91ABNA0417164300"
    assert (body["residence"], body["complete"], body["lacking"], body["livemode"]) == ("NL", True, [], True)
    got = await client.get(_url(other_freelancer), headers=other_freelancer.live)
    assert got.status_code == 200
    assert {k: v for k, v in got.json().items() if k != "updated_at"} == {
        k: v for k, v in body.items() if k != "updated_at"
    }
    assert not [entry for entry in logs if any(s in repr(entry) for s in SECRETS)]
    async with sessionmaker() as session:
        stored = await session.scalar(select(Dac7Seller).where(Dac7Seller.user_id == other_freelancer.user.id))
    assert stored is not None
    assert stored.identity_sealed is not None
    assert not [s for s in SECRETS if s.encode() in stored.identity_sealed], "encrypted at rest"
    snapshot = await client.get(f"/v1/dac7/seller/{other_freelancer.user.id}", headers=other_freelancer.live)
    assert (snapshot.json()["tin"], snapshot.json()["member_state"]) == ("111222333", "NL")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"tins": [{"tin": "111222334", "issued_by": "NL"}]}, "tins.0"),
        ({"tins": [{"tin": "111222333", "issued_by": "US"}]}, "tins.0"),
        ({"vat": "NL004495446B01"}, "vat"),
        ({"financial_account": {"iban": "NL91ABNA0417164301"}}, "financial_account.iban"),
        ({"address": {"country": "XX", "city": "Amsterdam"}}, "address.country"),
        ({"date_of_birth": "2999-01-01"}, "date_of_birth"),
        ({"date_of_birth": None}, "date_of_birth"),
        ({"tins": [], "place_of_birth": None}, "tins"),
        ({"tins": [], "tin_not_issued": True, "place_of_birth": None}, "place_of_birth"),
        ({"legal_name": "Jansen B.V."}, "legal_name"),
        ({"shoe_size": 43}, "shoe_size"),
    ],
)
async def test_bad_input_names_the_field_and_writes_nothing(
    change: dict[str, Any], field: str, client: AsyncClient, other_freelancer: Account
) -> None:
    assert (await client.put(_url(other_freelancer), headers=other_freelancer.live, json=IDENTITY)).status_code == 200
    before = (await client.get(_url(other_freelancer), headers=other_freelancer.live)).json()
    refused = await client.put(_url(other_freelancer), headers=other_freelancer.live, json={**IDENTITY, **change})
    assert refused.status_code == 400, refused.text
    problem = refused.json()
    assert problem["code"] == "validation_failed"
    assert field in [e["field"].removeprefix("body.") for e in problem["errors"]], problem
    assert not [s for s in ("111222334", "NL004495446B01", "NL91ABNA0417164301") if s in refused.text]
    assert (await client.get(_url(other_freelancer), headers=other_freelancer.live)).json() == before


async def test_an_entity_gives_its_legal_name_registration_number_and_establishments(
    client: AsyncClient, other_freelancer: Account
) -> None:
    entity = {
        "kind": "entity",
        "legal_name": "Jansen Consultancy B.V.",
        "business_registration_number": "12345678",
        "address": IDENTITY["address"],
        "tins": [{"tin": "111222333", "issued_by": "NL"}],
        "permanent_establishments": ["be", "DE"],
    }
    put = await client.put(_url(other_freelancer), headers=other_freelancer.live, json=entity)
    assert put.status_code == 200, put.text
    assert put.json()["permanent_establishments"] == ["BE", "DE"]
    refused = await client.put(
        _url(other_freelancer), headers=other_freelancer.live, json={**entity, "legal_name": None}
    )
    assert refused.status_code == 400
    assert [e["field"] for e in refused.json()["errors"]] == ["legal_name"]


async def test_only_the_seller_writes_and_only_it_and_its_grant_holders_read(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    other_freelancer: Account,
    seller: Account,
    business: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    url = _url(other_freelancer)
    assert (await client.put(url, headers=other_freelancer.live, json=IDENTITY)).status_code == 200
    for headers in (business.live, seller.live):
        refused = await client.put(url, headers=headers, json=IDENTITY)
        assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")
        assert (await client.get(url, headers=headers)).status_code == 403
    await give_grant(sessionmaker, other_freelancer.user, business.user, Environment.live)
    read = await client.get(url, headers=business.live)
    assert (read.status_code, read.json()["last_name"]) == (200, "Jansen")
    assert (await client.put(url, headers=business.live, json=IDENTITY)).status_code == 403, "a grant only reads"
    assert (await sandbox_client.get(url, headers=other_freelancer.test)).status_code == 403, "not set in the sandbox"
    sandbox = await sandbox_client.put(url, headers=other_freelancer.test, json=IDENTITY)
    assert (sandbox.status_code, sandbox.json()["livemode"]) == (200, False)
