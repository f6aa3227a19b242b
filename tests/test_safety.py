"""Each unsafe setting is found, with its severity; clean production settings give no unsafe finding."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Deployment, PasswordHashProfile, Settings, estimated_entropy_bits
from compliance_api.demo.fixtures import create_demo
from compliance_api.kit.environment import Environment
from compliance_api.passport.certificates import SUFFIX
from compliance_api.passport.signing import add_key
from compliance_api.safety import Severity, database_findings, findings, unsafe
from tests.conftest import SECRET

PG = "postgresql://app@db.internal/compliance"


@pytest.fixture(scope="module")
def signing_keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("keys")
    for environment in Environment:
        add_key(root, environment)
    return root


@pytest.fixture(autouse=True)
def _production_has_signing_keys(signing_keys: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPLIANCE_SIGNING_KEYS_DIR", str(signing_keys))


def _production(**changes: Any) -> Settings:
    """Settings a careful operator would run production with, then `changes`."""
    values: dict[str, Any] = {
        "deployment": Deployment.production,
        "database_url": PG,
        "redis_url": "redis://cache.internal:6379/0",
        "secret_key": SECRET,
        "public_base_url": "https://api.example.test",
        "metrics_enabled": False,
        "smtp_url": "smtps://mailer:password@mail.internal:465",
        "webhooks_embedded_worker": False,  # explicit: `serve` (run in-process by CLI tests) defaults it on
        **changes,
    }
    return Settings(**values)


def _codes(settings: Settings, workers: int = 1) -> dict[str, Severity]:
    return {finding.code: finding.severity for finding in findings(settings, workers=workers)}


def test_careful_production_settings_have_no_finding() -> None:
    assert findings(_production(), workers=4) == []


@pytest.mark.parametrize("secret", ["changeme", "secret", "short-but-not-a-placeholder", "CHANGEME"])
def test_placeholder_or_short_secret_is_unsafe(secret: str) -> None:
    assert _codes(_production(secret_key=secret)) == {"secret_placeholder": Severity.unsafe}


def test_missing_secret_is_unsafe() -> None:
    assert _codes(_production(secret_key="")) == {"secret_missing": Severity.unsafe}


def test_sqlite_with_several_workers_is_unsafe_and_with_one_a_warning(tmp_path: Any) -> None:
    sqlite = f"sqlite:///{tmp_path / 'x.db'}"
    assert _codes(_production(database_url=sqlite), workers=2) == {"sqlite_several_workers": Severity.unsafe}
    assert _codes(_production(database_url=sqlite)) == {"sqlite_in_production": Severity.warning}
    assert _codes(_production(database_url="")) == {"sqlite_in_production": Severity.warning}  # the default


def test_the_test_runs_password_hashing_is_unsafe() -> None:
    cheap = _production(password_hash_profile=PasswordHashProfile.cheapest)
    assert _codes(cheap) == {"password_hash_for_tests": Severity.unsafe}


def test_several_workers_without_redis_is_unsafe() -> None:
    assert _codes(_production(redis_url=""), workers=3) == {"no_redis_several_workers": Severity.unsafe}
    assert _codes(_production(redis_url="")) == {"no_redis": Severity.warning}


def test_network_settings_that_deserve_a_look_are_warnings() -> None:
    loose = _production(
        cors_allow_origins=("*",),
        forwarded_allow_ips="*",
        hsts_max_age_seconds=0,
        public_base_url="http://api.example.test",
        metrics_enabled=True,
    )
    assert _codes(loose) == {
        "cors_any_origin": Severity.warning,
        "forwarded_from_anyone": Severity.warning,
        "hsts_disabled": Severity.warning,
        "public_url_not_https": Severity.warning,
        "metrics_public": Severity.warning,
    }
    assert unsafe(findings(loose)) == []


def test_embedded_defaults_are_judged_for_production_only_where_it_matters() -> None:
    """Embedded mode on one machine: SQLite, no Redis, http and metrics are fine; a missing secret is still named."""
    embedded = Settings(secret_key="", database_url="", redis_url="")
    assert _codes(embedded) == {"secret_missing": Severity.unsafe}


def test_unsafe_findings_come_first() -> None:
    found = findings(_production(secret_key="changeme", hsts_max_age_seconds=0, redis_url=""), workers=2)
    assert [f.severity for f in found] == [Severity.unsafe, Severity.unsafe, Severity.warning]
    assert "COMPLIANCE_SECRET_KEY" in str(found[0])


def test_production_without_smtp_is_a_warning() -> None:
    assert _codes(_production(smtp_url="")) == {"smtp_missing": Severity.warning}


def test_previous_secret_equal_to_the_current_one_is_unsafe() -> None:
    assert _codes(_production(secret_key_previous=SECRET)) == {"secret_previous_equals_current": Severity.unsafe}


def test_placeholder_previous_secret_is_unsafe() -> None:
    assert _codes(_production(secret_key_previous="changeme")) == {"secret_previous_placeholder": Severity.unsafe}


def test_a_rotation_in_progress_is_a_reminder() -> None:
    rotating = _production(secret_key_previous="retired-secret-Jq4vN0w8xKc2LzR7mT5pYb1sHd9gFe3u")
    assert _codes(rotating) == {"secret_rotation_in_progress": Severity.warning}


def test_secret_keys_lists_the_current_secret_first_and_validates_the_previous_one() -> None:
    previous = "retired-secret-Jq4vN0w8xKc2LzR7mT5pYb1sHd9gFe3u"
    assert _production().secret_keys() == (SECRET.encode(),)
    assert _production(secret_key_previous=previous).secret_keys() == (SECRET.encode(), previous.encode())
    with pytest.raises(ValueError, match="COMPLIANCE_SECRET_KEY_PREVIOUS is shorter than 32 characters"):
        _production(secret_key_previous="too-short").secret_keys()


def test_private_webhook_targets_in_production_are_unsafe() -> None:
    assert _codes(_production(webhooks_allow_private_targets=True)) == {"webhooks_private_targets": Severity.unsafe}


def test_private_webhook_targets_are_fine_in_embedded_mode() -> None:
    embedded = _production(deployment=Deployment.embedded, webhooks_allow_private_targets=True)
    assert "webhooks_private_targets" not in _codes(embedded)


def test_the_embedded_webhook_worker_in_production_is_a_warning() -> None:
    assert _codes(_production(webhooks_embedded_worker=True)) == {"webhooks_embedded_worker": Severity.warning}


LOW_ENTROPY = [
    "a" * 32,
    "ab" * 16,
    "abc" * 11,
    "0" * 31 + "1",
    "Aa" * 20,
    "abcdefghijklmnopqrstuvwxyz012345",  # a keyboard sequence: every character differs, yet it is guessed at once
    "Password1234567890Password1234567890!",  # a word, a sequence, and the two repeated
    "0123456789abcdef" * 2,
    "summer2026summer2026summer2026!!",
]


@pytest.mark.parametrize("secret", LOW_ENTROPY)
def test_a_long_but_guessable_secret_is_unsafe_and_refused_at_start(secret: str) -> None:
    assert _codes(_production(secret_key=secret)) == {"secret_low_entropy": Severity.unsafe}
    with pytest.raises(ValueError, match="COMPLIANCE_SECRET_KEY is guessable"):
        _production(secret_key=secret).secret_key_bytes()


def test_a_previous_secret_with_too_little_entropy_is_unsafe() -> None:
    assert _codes(_production(secret_key_previous="z" * 40)) == {"secret_previous_low_entropy": Severity.unsafe}


def test_generated_secrets_of_every_usual_kind_pass() -> None:
    for secret in (secrets.token_hex(16), secrets.token_hex(32), secrets.token_urlsafe(24), secrets.token_urlsafe(48)):
        assert _codes(_production(secret_key=secret)) == {}, secret


def test_the_secret_the_embedded_mode_generates_passes(tmp_path: Path) -> None:
    embedded = Settings(secret_key="", var_dir=tmp_path)
    generated = embedded.secret_key_bytes().decode()
    assert (tmp_path / "secret_key").read_text().strip() == generated
    assert _codes(_production(secret_key=generated)) == {}


def test_a_long_generated_secret_is_judged_quickly_and_passes() -> None:
    assert _codes(_production(secret_key=secrets.token_urlsafe(600))) == {}


def test_the_estimate_counts_guesses_not_characters() -> None:
    assert estimated_entropy_bits("a" * 32) < 10
    assert estimated_entropy_bits("abcdefghijklmnopqrstuvwxyz012345") < 20
    assert estimated_entropy_bits(secrets.token_hex(16)) > 80


async def test_a_production_database_holding_demo_accounts_is_unsafe(
    database_url: str, sessionmaker: async_sessionmaker[AsyncSession], engine: object, pepper: bytes
) -> None:
    production = _production(database_url=database_url)
    assert await database_findings(production) == []
    async with sessionmaker.begin() as session:
        await create_demo(session, pepper=pepper)

    [found] = await database_findings(production)

    assert (found.severity, found.code) == (Severity.unsafe, "demo_accounts")
    assert "demo-business@example.com (business, pro plan)" in found.message
    assert await database_findings(production.model_copy(update={"deployment": Deployment.embedded})) == []


async def test_a_database_check_cannot_read_is_a_warning(tmp_path: Path) -> None:
    unmigrated = _production(database_url=f"sqlite:///{tmp_path / 'empty.db'}")
    [found] = await database_findings(unmigrated)
    assert (found.severity, found.code) == (Severity.warning, "database_unread")


def test_a_production_key_without_its_pdf_signing_certificate_is_unsafe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for environment in Environment:
        add_key(tmp_path, environment)
    (tmp_path / "test" / f"0001{SUFFIX}").unlink()  # a key made before dossier PDFs were signed
    monkeypatch.setenv("COMPLIANCE_SIGNING_KEYS_DIR", str(tmp_path))
    found = [(f.severity, f.code) for f in findings(_production()) if "signing" in f.code]
    assert found == [(Severity.unsafe, "dossier_signing_certificate_missing")]
    [message] = [f.message for f in findings(_production()) if f.code == "dossier_signing_certificate_missing"]
    assert "keys rotate --env" in message
