"""`compliance-api dac7 seller|import|grant|revoke-grant|export`."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from httpx import AsyncClient

from compliance_api.dac7.dpi import DPI_NS
from tests.cli.conftest import invoke
from tests.factories import bearer

SELLER = "sara@example.com"
BUSINESS = "acme@example.com"


@pytest.fixture
def sara(cli_env: dict[str, str]) -> tuple[dict[str, str], str]:
    code, out, _ = invoke(cli_env, "users", "create", SELLER, "--kind", "freelancer")
    assert code == 0
    assert invoke(cli_env, "users", "create", BUSINESS, "--kind", "business")[0] == 0
    return cli_env, out.strip()


def test_seller_checks_the_tin_for_its_member_state(sara: tuple[dict[str, str], str]) -> None:
    env, user_id = sara
    code, _, err = invoke(env, "dac7", "seller", SELLER, "--tin", "111222334", "--member-state", "NL")
    assert code == 1
    assert "stdnum.nl.bsn" in err
    assert "checksum" in err
    code, _, err = invoke(env, "dac7", "seller", SELLER, "--tin", "111222333", "--member-state", "XX")
    assert (code, "not an EU member state" in err) == (1, True)
    code, out, _ = invoke(env, "dac7", "seller", SELLER, "--tin", "1112.22.333", "--member-state", "nl", "--json")
    assert code == 0
    assert json.loads(out) == {
        "freelancer_id": user_id,
        "tin": "111222333",
        "member_state": "NL",
        "rule": "stdnum.nl.bsn",
    }
    code, _, err = invoke(env, "dac7", "seller", BUSINESS, "--tin", "111222333", "--member-state", "NL")
    assert (code, "only freelancers" in err) == (1, True)


def test_import_grant_and_export(sara: tuple[dict[str, str], str], tmp_path: Path) -> None:
    env, user_id = sara
    assert invoke(env, "dac7", "seller", SELLER, "--tin", "111222333", "--member-state", "NL")[0] == 0
    activities = tmp_path / "activities.csv"
    activities.write_text(
        "activity_id,freelancer_id,activity_date,consideration_eur,fees_eur,taxes_eur\n"
        f"a-1,{user_id},2025-02-01,100.00,10.00,0\n"
        f"a-2,{user_id},2025-07-01,200.00,20.00,0\n"
    )
    code, out, _ = invoke(env, "dac7", "import", str(activities), "--json")
    assert code == 0
    assert json.loads(out) == {
        "rows": 2,
        "created": 2,
        "updated": 0,
        "unchanged": 0,
        "events": 1,
        "environment": "live",
    }
    assert json.loads(invoke(env, "dac7", "import", str(activities), "--json")[1])["unchanged"] == 2
    broken = tmp_path / "broken.csv"
    broken.write_text(activities.read_text() + f"a-3,{user_id},2025-07-01,abc,0,0\n")
    code, _, err = invoke(env, "dac7", "import", str(broken))
    assert code == 1
    assert "line 4, field consideration_eur" in err

    code, out, _ = invoke(env, "dac7", "grant", SELLER, BUSINESS, "--json")
    assert code == 0
    grant = json.loads(out)
    assert grant["status"] == "active"
    code, out, _ = invoke(env, "dac7", "revoke-grant", grant["id"], "--json")
    assert (code, json.loads(out)["status"]) == (0, "revoked")
    assert invoke(env, "dac7", "grant", BUSINESS, SELLER)[0] == 1, "a business is no seller"

    code, out, _ = invoke(
        env, "dac7", "export", "--year", "2025", "--operator-name", "Platform B.V.", "--operator-tin", "123456789"
    )
    assert code == 0
    root = ET.fromstring(out.encode())
    assert root.tag == f"{{{DPI_NS}}}DPI_OECD"
    quarters = [e.text for e in root.iter() if e.tag.startswith(f"{{{DPI_NS}}}ConsQ")]
    assert quarters == ["90", "0", "180", "0"]
    target = tmp_path / "dpi.xml"
    code, out, _ = invoke(
        env,
        "dac7",
        "export",
        "--year",
        "2025",
        "--operator-name",
        "P",
        "--operator-tin",
        "1",
        "--out",
        str(target),
        "--json",
    )
    assert code == 0
    assert json.loads(out)["sellers"] == 1
    assert ET.parse(target).getroot().tag == f"{{{DPI_NS}}}DPI_OECD"
    code, _, err = invoke(env, "dac7", "export", "--year", "2019", "--operator-name", "P", "--operator-tin", "1")
    assert (code, "--year" in err) == (1, True)


async def test_demo_prints_an_authorised_and_an_unauthorised_sandbox_seller(
    cli_env: dict[str, str], sandbox_client: AsyncClient, client: AsyncClient
) -> None:
    for _ in range(2):  # a second demo leaves the fixtures as they were
        code, out, _ = await asyncio.to_thread(invoke, cli_env, "demo", "--json")  # the CLI runs its own loop
        assert code == 0
    document = json.loads(out)
    sellers = document["fixtures"]["dac7"]
    business = bearer(document["tokens"]["test"])
    allowed = await sandbox_client.get(f"/v1/dac7/seller/{sellers['authorised_seller']}", headers=business)
    assert allowed.status_code == 200
    assert allowed.json()["number_of_activities"] == 3
    assert allowed.json()["total_consideration_eur"] == 2205.45
    assert allowed.json()["livemode"] is False
    refused = await sandbox_client.get(f"/v1/dac7/seller/{sellers['unauthorised_seller']}", headers=business)
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")
    live = await client.get(
        f"/v1/dac7/seller/{sellers['authorised_seller']}", headers=bearer(document["tokens"]["live"])
    )
    assert live.status_code == 403, "the fixtures live in the sandbox only"
