"""The CLI starts at once: `--help` imports no command, a command's own help imports neither the database layer nor
the web framework, and a command that works imports what it uses and not the application. Held by counting the
modules a fresh interpreter has imported, never by timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
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


LOADED_MODULES_OF_EACH = """
import json, os, sys
from compliance_api.cli import app

def run(args):
    try:
        app(args, prog_name="compliance-api")
    except SystemExit:
        pass

warm_up, runs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
for args in warm_up:
    run(args)
loaded = {}
for args in runs:
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(reader)
        run(args)
        os.write(writer, json.dumps(sorted(sys.modules)).encode())
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as report:
        printed = report.read()
    _, status = os.waitpid(child, 0)
    loaded[" ".join(args)] = json.loads(printed) if status == 0 else None
sys.stderr.write(json.dumps({"warm_up": sorted(sys.modules), "runs": loaded}))
"""
WARM_UP = [["--help"], ["tokens", "--help"]]
"""What the interpreter the runs are forked from runs first: the CLI's help machinery (typer, rich) is then loaded
once, not by each run."""


@dataclass(frozen=True, slots=True)
class ForkedRuns:
    warm_up: set[str]
    """The modules of the interpreter the runs are forked from, once it ran `WARM_UP`."""
    runs: dict[str, set[str]]
    """The modules each run had imported (the warm-up's and its own), by its arguments; a run that failed is left
    out."""


def forked_runs(runs: list[list[str]]) -> ForkedRuns:
    """`compliance-api ARGS` for each of `runs`, each in a process of its own forked from one fresh interpreter that
    ran `WARM_UP`: a module a run imports shows as it would in an interpreter of its own, without paying for one
    (about 0.2 s) per run."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED_MODULES_OF_EACH, json.dumps(WARM_UP), json.dumps(runs)],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = json.loads(done.stderr.splitlines()[-1])
    by_run = {args: set(modules) for args, modules in loaded["runs"].items() if modules is not None}
    return ForkedRuns(set(loaded["warm_up"]), by_run)


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


DOING_NO_WORK = [*([*path, "--help"] for path in COMMAND_PATHS), ["tokens"]]


@pytest.fixture(scope="module")
def doing_no_work() -> ForkedRuns:
    return forked_runs(DOING_NO_WORK)


def test_the_runs_are_forked_from_an_interpreter_that_imported_nothing_heavy(doing_no_work: ForkedRuns) -> None:
    """So a heavy module in a forked run is one the run imported itself."""
    assert heavy(doing_no_work.warm_up) == set()


def test_a_forked_run_imports_what_an_interpreter_of_its_own_does(doing_no_work: ForkedRuns) -> None:
    """What a fresh interpreter imports for a light command's help and a heavy command's, the forked run imports
    too; it has no more than those and the warm-up's."""
    for args in (["keys", "--help"], ["serve", "--help"]):
        own = loaded_modules(*args)
        assert own <= doing_no_work.runs[" ".join(args)] <= own | doing_no_work.warm_up


@pytest.mark.parametrize("args", DOING_NO_WORK, ids=" ".join)
def test_commands_that_do_no_work_import_nothing_heavy(args: list[str], doing_no_work: ForkedRuns) -> None:
    """Every command's and subcommand's help, with no exemption: what a command needs at run time is imported by
    the function that runs it, and what its options show (enums, limits, defaults) lives in light modules."""
    assert " ".join(args) in doing_no_work.runs, "the run failed (its traceback is on the forking interpreter's stderr)"
    assert heavy(doing_no_work.runs[" ".join(args)]) == set()


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


def test_the_application_loads_pyhanko_with_its_first_pdf_not_at_start_up() -> None:
    """pyHanko takes a third of a second to import: every API process and worker would pay it at start-up."""
    probe = (
        "import sys, compliance_api.app; print(sorted({m.split('.')[0] for m in sys.modules} & {'pyhanko', 'aiohttp'}))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert loaded.stdout.strip() == "[]"
