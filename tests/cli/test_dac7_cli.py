"""`compliance-api dac7 seller|identities|operator|import|grant|revoke-grant|export|withdraw|reseal`."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

import pytest
from httpx import AsyncClient

from compliance_api.dac7.dpi import DPI_NS
from compliance_api.kit.clock import utcnow
from tests.cli.conftest import invoke
from tests.dac7.dpi_schema import schema_errors
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
    assert json.loads(out) == {"freelancer_id": user_id, "member_state": "NL"}
    code, _, err = invoke(env, "dac7", "seller", BUSINESS, "--tin", "111222333", "--member-state", "NL")
    assert (code, "only freelancers" in err) == (1, True)


OPERATOR = (
    "--name", "Platform B.V.", "--tin", "862637223", "--tin-issued-by", "NL", "--country", "NL",
    "--nexus", "RPONEX1", "--street", "Damrak", "--building", "1", "--post-code", "1012 LG",
    "--city", "Amsterdam", "--address-country", "NL",
)  # fmt: skip
IDENTITY = {
    "first_name": "Sara",
    "last_name": "Jansen",
    "date_of_birth": "1991-02-03",
    "address": {"country": "NL", "street": "Damrak", "building": "2", "post_code": "1012 LG", "city": "Amsterdam"},
    "tins": [{"tin": "111222333", "issued_by": "NL"}],
    "financial_account": {"iban": "NL91ABNA0417164300", "holder": "S. Jansen"},
}


def _identities(tmp_path: Path, *records: Mapping[str, object]) -> str:
    path = tmp_path / "identities.json"
    path.write_text(json.dumps(list(records)))
    return str(path)


def test_identities_are_all_checked_before_any_is_written(sara: tuple[dict[str, str], str], tmp_path: Path) -> None:
    env, user_id = sara
    good = {"email": SELLER, **IDENTITY}
    bad_tin = {"freelancer_id": user_id, **IDENTITY, "tins": [{"tin": "111222334", "issued_by": "NL"}]}
    code, _, err = invoke(env, "dac7", "identities", _identities(tmp_path, good, bad_tin))
    assert code == 1
    assert "record 2, field tins.0: " in err
    assert "111222334" not in err, "a refusal never repeats the value (personal data)"
    incomplete = {"email": SELLER, **IDENTITY, "date_of_birth": None}
    code, _, err = invoke(env, "dac7", "identities", _identities(tmp_path, incomplete))
    assert (code, "record 1, field date_of_birth: is required" in err) == (1, True)
    bad_iban = {"email": SELLER, **IDENTITY, "financial_account": {"iban": "NL91ABNA0417164301"}}
    code, _, err = invoke(env, "dac7", "identities", _identities(tmp_path, bad_iban))
    assert (code, "record 1, field financial_account.iban" in err) == (1, True)
    code, _, err = invoke(env, "dac7", "export", "--year", "2025")
    assert (code, "no DAC7 platform operator" in err) == (1, True)
    assert invoke(env, "dac7", "operator", *OPERATOR)[0] == 0
    code, out, _ = invoke(env, "dac7", "export", "--year", "2025")
    assert code == 0
    assert ET.fromstring(out.encode()).findtext(f".//{{{DPI_NS}}}MessageTypeIndic") == "DPI403", "nobody recorded"
    code, out, _ = invoke(env, "dac7", "identities", _identities(tmp_path, good), "--json")
    assert (code, json.loads(out)) == (0, {"identities": 1, "environment": "live"})


def test_import_grant_and_export(sara: tuple[dict[str, str], str], tmp_path: Path) -> None:
    env, user_id = sara
    assert invoke(env, "dac7", "operator", *OPERATOR)[0] == 0
    assert invoke(env, "dac7", "identities", _identities(tmp_path, {"email": SELLER, **IDENTITY}))[0] == 0
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

    code, out, _ = invoke(env, "dac7", "export", "--year", "2025")
    assert code == 0
    assert schema_errors(out.encode()) == []
    root = ET.fromstring(out.encode())
    assert root.tag == f"{{{DPI_NS}}}DPI_OECD"
    quarters = [e.text for e in root.iter() if e.tag.startswith(f"{{{DPI_NS}}}ConsQ")]
    assert quarters == ["90", "0", "180", "0"]
    code, _, err = invoke(env, "dac7", "export", "--year", "2025", "--out", str(tmp_path / "none.xml"))
    assert (code, "nothing to send" in err, (tmp_path / "none.xml").exists()) == (0, True, False)
    code, _, err = invoke(env, "dac7", "withdraw", SELLER, "--year", "2025")
    assert (code, "withdrawn" in err) == (0, True)
    target = tmp_path / "dpi.xml"
    code, out, _ = invoke(env, "dac7", "export", "--year", "2025", "--out", str(target), "--json")
    assert code == 0
    summary = json.loads(out)
    assert (summary["message_type_indic"], summary["deleted"], summary["sellers"]) == ("DPI402", 1, 1)
    assert schema_errors(target.read_bytes()) == []
    assert not list(tmp_path.glob("*.partial"))
    code, _, err = invoke(env, "dac7", "export", "--year", "2019")
    assert (code, "--year" in err) == (1, True)


def test_reseal_moves_identities_to_a_rotated_key(sara: tuple[dict[str, str], str], tmp_path: Path) -> None:
    env, _ = sara
    assert invoke(env, "dac7", "identities", _identities(tmp_path, {"email": SELLER, **IDENTITY}))[0] == 0
    new_secret = "rotated-3bXq9TmVw2LpZkR8sYd4NfHc6JgUa1Eo"
    rotating = {
        **env,
        "COMPLIANCE_SECRET_KEY": new_secret,
        "COMPLIANCE_SECRET_KEY_PREVIOUS": env["COMPLIANCE_SECRET_KEY"],
    }
    code, out, _ = invoke(rotating, "dac7", "reseal", "--json")
    assert (code, json.loads(out)) == (0, {"resealed": 1})
    rotated = {**env, "COMPLIANCE_SECRET_KEY": new_secret}
    assert invoke(rotated, "dac7", "seller", SELLER, "--tin", "36574261809", "--member-state", "DE")[0] == 0, (
        "the identity opens under the new key alone"
    )
    code, _, err = invoke(env, "dac7", "seller", SELLER, "--tin", "36574261809", "--member-state", "DE")
    assert (code, "opens under no configured key" in err) == (1, True), "and no longer under the retired one"


async def test_demo_prints_an_authorised_and_an_unauthorised_sandbox_seller(
    cli_env: dict[str, str], sandbox_client: AsyncClient, client: AsyncClient, tmp_path: Path
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
    target = tmp_path / "sandbox.xml"
    year = str(utcnow().year)
    code, _, err = await asyncio.to_thread(
        invoke, cli_env, "dac7", "export", "--year", year, "--env", "test", "--out", str(target)
    )
    assert code == 0, err
    xml = target.read_bytes()
    assert schema_errors(xml) == [], "the sandbox fixtures make a valid file with no other option"
    root = ET.fromstring(xml)
    assert len(root.findall(f".//{{{DPI_NS}}}ReportableSeller")) == 2
    assert {e.text for e in root.iter("{urn:oecd:ties:dpistf:v1}DocTypeIndic")} == {"OECD11"}
