"""The CLI starts at once: `--help` imports no command, a command's own help imports neither the database layer nor
the web framework, and a command that works imports what it uses and not the application. Held by counting the
modules a fresh interpreter has imported, never by timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer._click.core import Command  # Typer ships its own copy of Click

from compliance_api.cli import COMMANDS
from tests.cli.conftest import invoke

HEAVY = ("fastapi", "starlette", "sqlalchemy", "redis", "uvicorn", "pydantic_settings", "compliance_api.app")
"""What the whole application brings and a command that does no work must not import."""

LOADED_MODULES = """
import json, sys
from compliance_api.cli import app
try:
    app(sys.argv[1:], prog_name="compliance-api")
except SystemExit:
    pass
sys.stderr.write(json.dumps(sorted(sys.modules)))
"""


def loaded_modules(*args: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a fresh interpreter has imported after running `compliance-api ARGS`."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED_MODULES, *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return set(json.loads(done.stderr.splitlines()[-1]))


def heavy(modules: set[str]) -> set[str]:
    return {name for name in modules if name.split(".")[0] in HEAVY or name in HEAVY}


def test_help_imports_no_command() -> None:
    modules = loaded_modules("--help")
    assert heavy(modules) == set()
    assert {name for name in modules if name.startswith("compliance_api")} == {"compliance_api", "compliance_api.cli"}


def _command_paths() -> list[list[str]]:
    """Every command and every subcommand, at any depth (`dac7 seller …`), as the words that name it."""

    def below(command: Command, path: list[str]) -> list[list[str]]:
        found = [path]
        for name, sub in getattr(command, "commands", {}).items():
            found += below(sub, [*path, name])
        return found

    return [path for name, lazy in COMMANDS.items() for path in below(lazy.load(name), [name])]


COMMAND_PATHS = _command_paths()


def test_every_command_and_subcommand_is_covered() -> None:
    """The walk finds the groups' subcommands too (a walk that stopped at the top would cover less than it says)."""
    assert ["classify", "bulk"] in COMMAND_PATHS
    assert ["openapi", "diff"] in COMMAND_PATHS
    assert len(COMMAND_PATHS) > len(COMMANDS)


@pytest.mark.parametrize(
    "args",
    [*([*path, "--help"] for path in COMMAND_PATHS), ["tokens"]],
    ids=" ".join,
)
def test_commands_that_do_no_work_import_nothing_heavy(args: list[str]) -> None:
    """Every command's and subcommand's help, with no exemption: what a command needs at run time is imported by
    the function that runs it, and what its options show (enums, limits, defaults) lives in light modules."""
    assert heavy(loaded_modules(*args)) == set()


def test_a_command_imports_what_it_uses_not_the_application(cli_env: dict[str, str]) -> None:
    assert invoke(cli_env, "migrate")[0] == 0
    assert invoke(cli_env, "users", "create", "startup@example.com")[0] == 0
    modules = loaded_modules("tokens", "create", "startup@example.com", "--env", "test", env=cli_env)
    assert "compliance_api.auth.service" in modules, "the command ran"
    assert not {"compliance_api.app", "compliance_api.dashboard.app", "uvicorn"} & modules


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_listed_help_is_the_commands_own(name: str) -> None:
    """The table `--help` prints from says what each command's own help says (its first paragraph)."""
    command = COMMANDS[name].load(name)
    own = command.short_help or command.help or ""
    assert COMMANDS[name].help == " ".join(own.split("\n\n")[0].split())


def test_every_command_is_listed_and_keeps_its_shape() -> None:
    code, out, _ = invoke({}, "--help")
    assert code == 0
    assert all(name in out for name in COMMANDS)
    code, out, _ = invoke({}, "keys", "--help")
    assert code == 0
    assert "rotate" in out, "a group of one command stays a group"


def test_the_export_imports_neither_the_application_nor_the_web_framework(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """The audit export holds its imports for hours of dossiers: FastAPI and the application are about 35 MiB it
    never uses (the services it calls raise the errors of `errors.py` and page with `kit/pagination.py`, both free
    of the framework; endpoints read the caller and the page's query from `auth/dependencies.py` and
    `kit/page_query.py`)."""
    assert invoke(cli_env, "migrate")[0] == 0
    out = tmp_path / "empty.zip"
    args = ("classifications", "export", "--from", "2026-03-01", "--to", "2026-03-31", "--out", str(out))
    modules = loaded_modules(*args, env=cli_env)
    assert "compliance_api.dossier.export" in modules, "the command ran"
    assert out.is_file()
    assert {name for name in modules if name.split(".")[0] in ("fastapi", "uvicorn")} == set()
    assert not {"compliance_api.app", "compliance_api.dashboard.app", "compliance_api.middleware"} & modules
