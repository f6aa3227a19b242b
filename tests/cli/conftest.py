"""CLI test wiring: the environment a command runs with, and a runner that captures its output."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from compliance_api.cli import app
from tests.conftest import SECRET


@pytest.fixture
def cli_env(database_url: str, var_dir: Path, engine: object) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url,
        "REDIS_URL": "",
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": str(var_dir),
    }


def invoke(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr
