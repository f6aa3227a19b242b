"""CLI test wiring: the environment a command runs with, and a runner that captures its output."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from compliance_api.cli import app
from compliance_api.kit.environment import Environment
from compliance_api.passport.signing import add_key


def invoke(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def with_signing_keys(env: dict[str, str]) -> dict[str, str]:
    """`env` with a passport signing key per environment under its var directory, as production needs."""
    for environment in Environment:
        add_key(Path(env["COMPLIANCE_VAR_DIR"]) / "keys", environment)
    return env
