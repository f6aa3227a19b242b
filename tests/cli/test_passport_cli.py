"""`compliance-api passport ...`, `keys rotate`, `idempotency purge` and the demo's passport fixtures."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path

import pytest
from httpx import AsyncClient

from compliance_api.kit.environment import Environment
from compliance_api.passport.signing import SigningKeys
from tests.auth.rotation import NEW_SECRET
from tests.cli.conftest import invoke
from tests.factories import bearer

FREELANCER = "anna@example.com"


@pytest.fixture
def anna(cli_env: dict[str, str]) -> dict[str, str]:
    assert invoke(cli_env, "users", "create", FREELANCER, "--kind", "freelancer")[0] == 0
    return cli_env


def test_operator_builds_a_passport_and_the_freelancer_reads_it(anna: dict[str, str]) -> None:
    code, out, _ = invoke(anna, "passport", "set", FREELANCER, "--sector", "ict", "--json")
    assert code == 0
    assert json.loads(out)["sector"] == "ict"
    code, out, _ = invoke(
        anna,
        "passport",
        "verify",
        FREELANCER,
        "identity",
        "--verified-on",
        "2026-01-05",
        "--expires",
        "2030-01-05",
        "--evidence",
        "passport NL-123",
        "--json",
    )
    assert code == 0
    assert json.loads(out) == {"check": "identity", "verified_on": "2026-01-05", "expires_on": "2030-01-05"}
    code, out, _ = invoke(anna, "passport", "verify", FREELANCER, "vat_number", "--json")
    today = dt.date.today()
    assert json.loads(out)["expires_on"] == (today + dt.timedelta(days=365)).isoformat(), "catalogue default"


def test_share_prints_the_token_alone_and_revoke_share_kills_it(anna: dict[str, str]) -> None:
    assert invoke(anna, "passport", "set", FREELANCER, "--sector", "ict", "--env", "test")[0] == 0
    code, out, _ = invoke(anna, "passport", "share", FREELANCER, "--ttl-days", "3", "--env", "test")
    assert code == 0
    token = out.strip()
    assert out == token + "\n"
    assert token.startswith("pst_")
    code, out, _ = invoke(anna, "passport", "revoke-share", token, "--json")
    assert code == 0
    assert json.loads(out)["status"] == "revoked"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["passport", "verify", FREELANCER, "photo"], "unknown check"),
        (["passport", "verify", FREELANCER, "identity", "--expires", "tomorrow"], "--expires must be a date"),
        (
            ["passport", "verify", FREELANCER, "identity", "--verified-on", "2026-02-02", "--expires", "2026-02-01"],
            "before the verified date",
        ),
        (["passport", "verify", FREELANCER, "identity", "--evidence", " "], "evidence reference"),
        (["passport", "verify", "nobody@example.com", "identity"], "no user"),
        (["passport", "set", FREELANCER, "--sector", " "], "sector must be"),
        (["passport", "share", FREELANCER], "has no passport"),
        (["passport", "revoke-share", "pst_unknown"], "no such share-token"),
    ],
)
def test_bad_passport_input_exits_non_zero_with_a_clear_message(
    anna: dict[str, str], args: list[str], message: str
) -> None:
    code, out, err = invoke(anna, *args)
    assert code == 1
    assert message in err
    assert out == ""


def test_business_users_have_no_passport(cli_env: dict[str, str]) -> None:
    invoke(cli_env, "users", "create", "shop@example.com")
    code, _, err = invoke(cli_env, "passport", "set", "shop@example.com", "--sector", "ict")
    assert code == 1
    assert "only freelancers have passports" in err


def test_keys_rotate_adds_a_signing_key_and_keeps_the_old_ones(cli_env: dict[str, str], var_dir: Path) -> None:
    code, out, _ = invoke(cli_env, "keys", "rotate", "--json")
    assert code == 0
    first = json.loads(out)
    code, out, _ = invoke(cli_env, "keys", "rotate", "--json")
    second = json.loads(out)
    assert second["published"] == [first["kid"], second["kid"]]
    keys = SigningKeys(var_dir / "keys", generate=False)
    assert [k.kid for k in keys.keys(Environment.live)] == second["published"]
    assert invoke(cli_env, "keys", "rotate", "--env", "test")[0] == 0
    assert {k.kid for k in keys.keys(Environment.test)}.isdisjoint(second["published"])
    assert (
        second["pdf_certificate_sha256"]
        == keys.pdf_signer(Environment.live).fingerprint
        != first["pdf_certificate_sha256"]
    ), "a new PDF signing certificate with each key, its fingerprint printed to be published"


def test_idempotency_purge_reports_a_count(cli_env: dict[str, str]) -> None:
    code, out, _ = invoke(cli_env, "idempotency", "purge", "--json")
    assert code == 0
    assert json.loads(out) == {"deleted": 0}


async def test_demo_prints_sandbox_share_tokens_that_behave_as_documented(
    cli_env: dict[str, str], sandbox_client: AsyncClient
) -> None:
    code, out, _ = await asyncio.to_thread(invoke, cli_env, "demo", "--json")  # the CLI runs its own event loop
    assert code == 0
    document = json.loads(out)
    fixtures = document["fixtures"]
    assert fixtures["passport_share_tokens"] == fixtures["passport"]["share_tokens"]
    verifier = bearer(document["tokens"]["test"])
    valid = await sandbox_client.get(
        f"/v1/passport/{fixtures['passport_share_tokens']['valid']}/verify", headers=verifier
    )
    assert valid.status_code == 200
    assert valid.json()["freelancer_id"] == fixtures["passport"]["freelancer_id"]
    assert valid.json()["compliance_score"] == 85
    expired = await sandbox_client.get(
        f"/v1/passport/{fixtures['passport_share_tokens']['expired']}/verify", headers=verifier
    )
    assert expired.status_code == 404
    own = await sandbox_client.get("/v1/passport", headers=bearer(fixtures["passport"]["token"]))
    assert own.json()["verified"] is True

    code, out, _ = await asyncio.to_thread(invoke, cli_env, "demo", "--json")
    again = json.loads(out)
    assert again["fixtures"]["passport"] == fixtures["passport"], "a second demo keeps the freelancer's tokens"
    old_valid = fixtures["passport_share_tokens"]["valid"]
    assert (await sandbox_client.get(f"/v1/passport/{old_valid}/verify", headers=verifier)).status_code == 200

    code, out, _ = await asyncio.to_thread(invoke, cli_env, "demo", "--rotate", "--json")
    renewed = json.loads(out)
    stale = await sandbox_client.get(f"/v1/passport/{old_valid}/verify", headers=bearer(renewed["tokens"]["test"]))
    assert stale.status_code == 404, "--rotate revokes the previous demo share-tokens"
    assert renewed["fixtures"]["passport_share_tokens"]["valid"] != old_valid


def test_revoke_share_during_a_secret_rotation_finds_a_share_made_before_it(anna: dict[str, str]) -> None:
    assert invoke(anna, "passport", "set", FREELANCER, "--sector", "ict")[0] == 0
    token = invoke(anna, "passport", "share", FREELANCER)[1].strip()
    rotated = {**anna, "COMPLIANCE_SECRET_KEY": NEW_SECRET}
    assert invoke(rotated, "passport", "revoke-share", token)[0] == 1
    code, out, _ = invoke(
        {**rotated, "COMPLIANCE_SECRET_KEY_PREVIOUS": anna["COMPLIANCE_SECRET_KEY"]},
        "passport",
        "revoke-share",
        token,
        "--json",
    )
    assert code == 0
    assert json.loads(out)["status"] == "revoked"
    code, out, _ = invoke(rotated, "passport", "revoke-share", token, "--json")
    assert (code, json.loads(out)["status"]) == (0, "revoked"), "re-hashed: found without the previous secret"
