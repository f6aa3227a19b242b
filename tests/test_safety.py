"""Each unsafe setting is found, with its severity; clean production settings give no unsafe finding."""

from __future__ import annotations

from typing import Any

import pytest

from compliance_api.config import Deployment, Settings
from compliance_api.safety import Severity, findings, unsafe
from tests.conftest import SECRET

PG = "postgresql://app@db.internal/compliance"


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
    rotating = _production(secret_key_previous="the-retired-secret-key-0123456789abcdef")
    assert _codes(rotating) == {"secret_rotation_in_progress": Severity.warning}


def test_secret_keys_lists_the_current_secret_first_and_validates_the_previous_one() -> None:
    previous = "the-retired-secret-key-0123456789abcdef"
    assert _production().secret_keys() == (SECRET.encode(),)
    assert _production(secret_key_previous=previous).secret_keys() == (SECRET.encode(), previous.encode())
    with pytest.raises(ValueError, match="COMPLIANCE_SECRET_KEY_PREVIOUS must be at least 32 characters"):
        _production(secret_key_previous="too-short").secret_keys()


def test_private_webhook_targets_in_production_are_unsafe() -> None:
    assert _codes(_production(webhooks_allow_private_targets=True)) == {"webhooks_private_targets": Severity.unsafe}


def test_private_webhook_targets_are_fine_in_embedded_mode() -> None:
    embedded = _production(deployment=Deployment.embedded, webhooks_allow_private_targets=True)
    assert "webhooks_private_targets" not in _codes(embedded)


def test_the_embedded_webhook_worker_in_production_is_a_warning() -> None:
    assert _codes(_production(webhooks_embedded_worker=True)) == {"webhooks_embedded_worker": Severity.warning}
