"""`compliance-api rulesets check`: validate ruleset files the way the service does when it starts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from compliance_api.classify.ruleset import RulesetError, load_rulesets
from compliance_api.cli.common import JsonOption, print_json

app = typer.Typer(no_args_is_help=True, help="Inspect the classifier rulesets.")


@app.command("check")
def check(
    directory: Annotated[
        Path | None, typer.Option("--dir", help="A folder of ruleset files (default: the packaged ones).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Validate every ruleset file; a broken one is named with its field, and the exit code is 1."""
    try:
        rulesets = load_rulesets(directory)
    except RulesetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    loaded = [rulesets.dutch, *rulesets.cross_border.values()]
    if as_json:
        print_json({"rulesets": [{"id": r.id, "version": r.version.isoformat()} for r in loaded]})
    else:
        typer.echo("\n".join(f"{r.id} {r.version.isoformat()}: ok" for r in loaded))
