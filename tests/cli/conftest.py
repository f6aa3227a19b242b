"""CLI test wiring: the environment a command runs with, and a runner that captures its output."""

from __future__ import annotations

from typer.testing import CliRunner

from compliance_api.cli import app


def invoke(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr
