"""`compliance-api`: the one command for operators.

Each command's module is imported only when that command runs (or prints its own help): `compliance-api --help`
lists the commands from the table below without importing any of them, and `tokens create` imports what tokens need,
not the whole application. Neither Typer nor Click loads commands lazily, hence the small group class here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from typer._click.core import (
        Command,
        Context,
    )  # Typer ships its own copy of Click; its classes are typed from there


@dataclass(frozen=True)
class Lazy:
    """A command to load on use: `module:attribute` is a Typer app (a group of commands) or a command function."""

    target: str
    help: str

    def load(self, name: str) -> Command:
        module, attribute = self.target.split(":")
        found = getattr(importlib.import_module(f"compliance_api.cli.{module}"), attribute)
        parent = typer.Typer()
        if isinstance(found, typer.Typer):
            parent.add_typer(found, name=name)
        else:
            parent.command(name)(found)
        return typer.main.get_group(parent).commands[name]


COMMANDS = {
    "serve": Lazy(
        "serve:serve",
        "Run the API (in production, only when `compliance-api check` finds nothing unsafe).",
    ),
    "migrate": Lazy(
        "migrate:migrate",
        "Bring the database to the newest schema.",
    ),
    "check": Lazy(
        "check:check",
        (
            "List unsafe settings and warnings, and in a production deployment demo accounts in its database; "
            "exit 1 when anything is unsafe for production."
        ),
    ),
    "demo": Lazy(
        "demo:demo",
        (
            "Create the demo users, tokens and sandbox fixtures (`--env live`: synthetic production data too), "
            "and print them with curl lines that work as printed; running it again keeps the tokens. Refused in a"
            " production deployment unless `--allow-production`."
        ),
    ),
    "purge-sandbox": Lazy(
        "sandbox:purge_sandbox_command",
        (
            "Delete sandbox rows last written more than the retention period ago (production is never touched); "
            "the fixtures of `compliance-api demo` stay. Prints the rows deleted per table; run it daily."
        ),
    ),
    "worker": Lazy(
        "webhooks:worker",
        (
            "Deliver webhooks, run the daily purges and refresh the WTTA register from "
            "COMPLIANCE_WTTA_REGISTER_URL until SIGTERM/SIGINT; run as many as you like on PostgreSQL (one on "
            "SQLite); in production, only when `compliance-api check` finds nothing unsafe."
        ),
    ),
    "openapi": Lazy(
        "openapi:app",
        "The OpenAPI contract: print, freeze (--write), check (--check), compare (diff).",
    ),
    "users": Lazy(
        "users:app",
        "Manage users.",
    ),
    "tokens": Lazy(
        "tokens:app",
        "Manage API tokens.",
    ),
    "classify": Lazy(
        "classify:app",
        "Classify engagements in bulk.",
    ),
    "classifications": Lazy(
        "classifications:app",
        "Manage the classification audit trail.",
    ),
    "rulesets": Lazy(
        "rulesets:app",
        "Inspect the classifier rulesets.",
    ),
    "wtta": Lazy(
        "wtta:app",
        "The WTTA admission register cache.",
    ),
    "passport": Lazy(
        "passport:app",
        "Manage freelancers' compliance passports.",
    ),
    "keys": Lazy(
        "keys:app",
        "Manage the passport signing keys.",
    ),
    "idempotency": Lazy(
        "idempotency:app",
        "Manage stored Idempotency-Key results.",
    ),
    "rates": Lazy(
        "rates:app",
        "Rate observations and benchmarks.",
    ),
    "dac7": Lazy(
        "dac7:app",
        "DAC7: the operator, sellers' identities, their activities, read grants and DAC7 reports.",
    ),
    "webhooks": Lazy(
        "webhooks:app",
        "Manage webhook endpoints.",
    ),
}
"""Every command, in the order `--help` lists them, with the short help it prints there (tests/cli/test_startup.py
checks each against the command's own)."""


class LazyCommands(TyperGroup):
    """`--help` lists each lazy command as a stub carrying its short help; running a command loads the real one."""

    def list_commands(self, ctx: Context) -> list[str]:
        return [*COMMANDS, *super().list_commands(ctx)]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        lazy = COMMANDS.get(cmd_name)
        if lazy is None:
            return super().get_command(ctx, cmd_name)
        return TyperCommand(cmd_name, help=lazy.help, short_help=lazy.help)

    def resolve_command(self, ctx: Context, args: list[str]) -> tuple[str | None, Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if name in COMMANDS:
            command = COMMANDS[name].load(name)
        return name, command, rest


app = typer.Typer(
    cls=LazyCommands,
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def root() -> None:
    """Compliance API: serve, migrate and manage data."""


def main() -> None:
    app()
