"""`compliance-api openapi`: print, freeze, check and compare the dated contracts.

The frozen contracts are read at module level (the tests replace `frozen_versions`, `frozen_contract`,
`CONTRACT_VERSION` and `generated_contract` here); the app and the comparison, which bring the web framework, are
imported by the functions that use them, so that `--help` stays light."""

from __future__ import annotations

import json
import secrets
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from compliance_api import CONTRACT_VERSION
from compliance_api.openapi.frozen import dumps, frozen_contract, frozen_versions

if TYPE_CHECKING:
    from compliance_api.openapi.diff import Change

app = typer.Typer(help="The OpenAPI contract: print, freeze (--write), check (--check), compare (diff).")

FREEZE_HINT = (
    "A breaking change needs a new dated contract: set CONTRACT_VERSION (compliance_api/__init__.py) to the "
    "release date and run `compliance-api openapi --write`; older contracts stay served at /openapi/<date>.json."
)


def generated_contract() -> dict[str, Any]:
    from compliance_api.app import create_app
    from compliance_api.config import Settings

    throwaway_secret = secrets.token_urlsafe(32)  # the contract needs no secret; make none under var/
    return create_app(Settings(access_log=False, secret_key=throwaway_secret)).openapi()


@app.callback(invoke_without_command=True)
def openapi(
    ctx: typer.Context,
    write: Annotated[
        bool, typer.Option("--write", help=f"Freeze the generated contract as {CONTRACT_VERSION}.json.")
    ] = False,
    check: Annotated[
        bool,
        typer.Option("--check", help="Fail unless the generated contract is frozen and breaks no older contract."),
    ] = False,
) -> None:
    """Print the generated contract, freeze it into the package's contracts folder, or check it (CI)."""
    if ctx.invoked_subcommand is not None:
        return
    generated = generated_contract()
    if check:
        raise typer.Exit(_check(generated))
    if write:
        _write(generated)
        return
    sys.stdout.write(dumps(generated))


def _check(generated: dict[str, Any]) -> int:
    """Generated vs the newest frozen contract: breaking → 1, not frozen yet → 1, identical → 0."""
    from compliance_api.openapi.diff import breaking_changes

    versions = frozen_versions()
    newest = versions[-1]
    if CONTRACT_VERSION < newest:
        typer.echo(f"error: CONTRACT_VERSION {CONTRACT_VERSION} is older than the newest frozen {newest}", err=True)
        return 1
    baseline = frozen_contract(newest)
    assert baseline is not None
    changes = breaking_changes(baseline, generated)
    if changes:
        _print_changes(changes, f"breaking changes against the contract frozen on {newest}")
        typer.echo(FREEZE_HINT, err=True)
        return 1
    if CONTRACT_VERSION != newest or generated != baseline:
        typer.echo(
            f"error: the generated contract {CONTRACT_VERSION} is not frozen yet (it only adds to {newest}): "
            "run `compliance-api openapi --write` and commit the file",
            err=True,
        )
        return 1
    typer.echo(f"ok: the generated contract is frozen as {newest} ({len(versions)} frozen contracts)")
    return 0


def _write(generated: dict[str, Any]) -> None:
    """Freeze; rewriting an existing dated contract may only add to it (a break needs a new date)."""
    from compliance_api.openapi.diff import breaking_changes

    existing = frozen_contract(CONTRACT_VERSION)
    if existing is not None and (changes := breaking_changes(existing, generated)):
        _print_changes(changes, f"refusing to rewrite {CONTRACT_VERSION}.json with breaking changes")
        typer.echo(FREEZE_HINT, err=True)
        raise typer.Exit(1)
    target = resources.files("compliance_api.openapi").joinpath("contracts", f"{CONTRACT_VERSION}.json")
    with open(str(target), "w") as handle:
        handle.write(dumps(generated))
    typer.echo(f"wrote {target}", err=True)


@app.command("diff")
def diff(
    old: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="The older contract (JSON).")],
    new: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="The newer contract (JSON).")],
) -> None:
    """List the changes from OLD to NEW that break clients of OLD; exit 1 when there is any."""
    from compliance_api.openapi.diff import breaking_changes

    try:
        changes = breaking_changes(json.loads(old.read_text()), json.loads(new.read_text()))
    except (ValueError, KeyError, TypeError) as exc:
        typer.echo(f"error: cannot compare the contracts: {exc}", err=True)
        raise typer.Exit(2) from None
    if changes:
        _print_changes(changes, f"{len(changes)} breaking change(s) from {old} to {new}")
        raise typer.Exit(1)
    typer.echo("ok: no breaking change")


def _print_changes(changes: list[Change], title: str) -> None:
    typer.echo(f"error: {title}:", err=True)
    for change in changes:
        typer.echo(f"  {change}", err=True)
