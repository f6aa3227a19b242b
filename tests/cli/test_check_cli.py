"""`compliance-api check` lists unsafe settings; `serve` in production refuses to start with any of them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compliance_api.cli import serving
from compliance_api.server import GuardedHttpToolsProtocol
from tests.cli.conftest import invoke, with_signing_keys


@pytest.fixture
def cli_env(cli_env: dict[str, str]) -> dict[str, str]:
    """The suite's CLI environment with the default password hashing: its test-only profile is itself a finding."""
    return {name: value for name, value in cli_env.items() if name != "COMPLIANCE_PASSWORD_HASH_PROFILE"}


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replaces uvicorn: records what `serve` would have started with instead of serving."""
    calls: list[dict[str, Any]] = []

    def fake_run(app: str, **options: Any) -> None:
        calls.append({"app": app, **options})

    monkeypatch.setattr(serving, "run_uvicorn", fake_run)
    return calls


def test_check_passes_on_safe_settings(cli_env: dict[str, str]) -> None:
    code, out, err = invoke(cli_env, "check")
    assert code == 0, out
    assert "0 unsafe" in err


def test_check_names_each_unsafe_setting_and_fails(cli_env: dict[str, str]) -> None:
    env = {**cli_env, "COMPLIANCE_SECRET_KEY": "changeme", "COMPLIANCE_CORS_ALLOW_ORIGINS": "*"}
    code, out, err = invoke(env, "check", "--workers", "2")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("unsafe")
    assert {line.split()[1].rstrip(":") for line in lines} >= {
        "secret_placeholder",
        "no_redis_several_workers",
        "cors_any_origin",
    }
    assert "warning" in out
    assert "unsafe," in err


def test_check_json(cli_env: dict[str, str]) -> None:
    env = {**cli_env, "COMPLIANCE_DEPLOYMENT": "production", "COMPLIANCE_SECRET_KEY": "dev"}
    code, out, _ = invoke(env, "check", "--json")
    assert code == 1
    report = json.loads(out)
    assert report["deployment"] == "production"
    assert {"severity": "unsafe", "code": "secret_placeholder"} in [
        {k: f[k] for k in ("severity", "code")} for f in report["findings"]
    ]


def test_serve_refuses_production_with_unsafe_settings_naming_them(
    cli_env: dict[str, str], started: list[dict[str, Any]]
) -> None:
    env = {**cli_env, "COMPLIANCE_DEPLOYMENT": "production", "COMPLIANCE_SECRET_KEY": "changeme"}
    code, _, err = invoke(env, "serve")
    assert code == 2
    assert "refusing to start in production" in err
    assert "secret_placeholder" in err
    assert started == []


def test_serve_refuses_production_sqlite_with_several_workers(
    cli_env: dict[str, str], started: list[dict[str, Any]]
) -> None:
    env = {
        **cli_env,
        "COMPLIANCE_DEPLOYMENT": "production",
        "DATABASE_URL": "sqlite:///var/never-created.db",
        "REDIS_URL": "redis://127.0.0.1:6379/5",
    }
    code, _, err = invoke(env, "serve", "--workers", "2")
    assert code == 2
    assert "sqlite_several_workers" in err
    assert started == []


def test_serve_starts_embedded_despite_findings_and_production_when_only_warnings_remain(
    cli_env: dict[str, str], started: list[dict[str, Any]]
) -> None:
    code, _, err = invoke({**cli_env, "COMPLIANCE_SECRET_KEY": ""}, "serve")  # embedded: generates a secret
    assert code == 0, err
    production = with_signing_keys({**cli_env, "COMPLIANCE_DEPLOYMENT": "production"})
    code, _, err = invoke(production, "serve")  # warnings only
    assert code == 0, err
    assert len(started) == 2


def test_serve_hardens_uvicorn(cli_env: dict[str, str], started: list[dict[str, Any]]) -> None:
    env = {**cli_env, "COMPLIANCE_FORWARDED_ALLOW_IPS": "10.0.0.2", "COMPLIANCE_KEEP_ALIVE_TIMEOUT_SECONDS": "7"}
    code, _, err = invoke(env, "serve", "--port", "8123")
    assert code == 0, err
    (options,) = started
    assert options["app"] == "compliance_api.app:create_app"
    assert options["port"] == 8123
    assert options["http"] is GuardedHttpToolsProtocol
    assert options["server_header"] is False
    assert options["proxy_headers"] is True
    assert options["forwarded_allow_ips"] == "10.0.0.2"
    assert options["timeout_keep_alive"] == 7


PRIVATE_TARGETS = {"COMPLIANCE_DEPLOYMENT": "production", "COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true"}
SCHEDULED = [
    ["worker", "--once"],
    ["classifications", "purge"],
    ["classifications", "rescore", "--dry-run"],
    ["idempotency", "purge"],
    ["purge-sandbox", "--dry-run"],
]


@pytest.mark.parametrize("command", SCHEDULED, ids=" ".join)
def test_the_worker_and_scheduled_jobs_refuse_production_with_unsafe_settings(
    cli_env: dict[str, str], command: list[str]
) -> None:
    code, out, err = invoke(with_signing_keys({**cli_env, **PRIVATE_TARGETS}), *command)
    assert code == 2, out + err
    assert "refusing to start in production" in err
    assert "webhooks_private_targets" in err
    assert out == ""


@pytest.mark.parametrize("command", SCHEDULED, ids=" ".join)
def test_the_worker_and_scheduled_jobs_run_in_production_when_only_warnings_remain(
    cli_env: dict[str, str], command: list[str]
) -> None:
    code, out, err = invoke(with_signing_keys({**cli_env, "COMPLIANCE_DEPLOYMENT": "production"}), *command)
    assert code == 0, out + err


def test_check_names_missing_signing_keys_in_one_line_each_and_serve_refuses_cleanly(
    cli_env: dict[str, str], started: list[dict[str, Any]]
) -> None:
    env = {**cli_env, "COMPLIANCE_DEPLOYMENT": "production"}
    code, out, _ = invoke(env, "check")
    assert code == 1
    missing = [line for line in out.splitlines() if "signing_keys_missing" in line]
    assert [line.split()[0] for line in missing] == ["unsafe", "unsafe"]
    assert "keys rotate --env live" in missing[0]
    code, _, err = invoke(env, "serve")
    assert code == 2
    assert "signing_keys_missing" in err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 3  # the refusal and one line per environment
    assert started == []


@pytest.mark.parametrize("secret", ["a" * 32, "abcdefghijklmnopqrstuvwxyz012345"])
def test_serve_refuses_a_guessable_secret_cleanly_even_in_embedded_mode(
    cli_env: dict[str, str], started: list[dict[str, Any]], secret: str
) -> None:
    code, _, err = invoke({**cli_env, "COMPLIANCE_SECRET_KEY": secret}, "serve")
    assert code == 2
    assert err.splitlines()[-1].startswith("error: COMPLIANCE_SECRET_KEY is guessable")
    assert started == []


def test_check_and_every_long_running_command_name_an_unknown_setting(
    cli_env: dict[str, str], started: list[dict[str, Any]]
) -> None:
    env = {**cli_env, "COMPLIANCE_WEBHOOK_ALLOW_PRIVATE_TARGETS": "false"}
    code, out, _ = invoke(env, "check")
    assert code == 0
    assert (
        "warning  unknown_setting: COMPLIANCE_WEBHOOK_ALLOW_PRIVATE_TARGETS is set but no setting has that name, so "
        "it is ignored (did you mean COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS?)." in out.splitlines()
    )
    for command in (["serve"], ["worker", "--once"]):
        code, _, err = invoke(env, *command)
        assert code == 0, err
        assert "warning: unknown_setting: COMPLIANCE_WEBHOOK_ALLOW_PRIVATE_TARGETS" in err


def test_check_reports_demo_accounts_in_a_production_database(cli_env: dict[str, str]) -> None:
    production = with_signing_keys({**cli_env, "COMPLIANCE_DEPLOYMENT": "production"})
    code, out, _ = invoke(production, "check")
    assert code == 0, out
    assert "demo_accounts" not in out

    assert invoke(production, "demo", "--allow-production")[0] == 0
    code, out, _ = invoke(production, "check")
    assert code == 1
    [line] = [line for line in out.splitlines() if "demo_accounts" in line]
    assert line.startswith("unsafe   demo_accounts: the production database holds")
    assert "demo-business@example.com (business, pro plan)" in line
    assert "demo-freelancer@example.com" in line
    code, out, _ = invoke(production, "check", "--json")
    assert {"severity": "unsafe", "code": "demo_accounts"} in [
        {k: f[k] for k in ("severity", "code")} for f in json.loads(out)["findings"]
    ]


def test_check_leaves_the_demo_alone_in_the_embedded_deployment(cli_env: dict[str, str]) -> None:
    assert invoke(cli_env, "demo")[0] == 0
    code, out, _ = invoke(cli_env, "check")
    assert code == 0, out
    assert "demo_accounts" not in out
