"""`compliance-api check`: what in the current settings is unsafe for production."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from compliance_api.cli.common import JsonOption, print_json


def check(
    workers: Annotated[int, typer.Option(min=1, help="The worker count `serve` will run with.")] = 1,
    as_json: JsonOption = False,
) -> None:
    """List unsafe settings and warnings, and in a production deployment demo accounts in its database; exit 1 when
    anything is unsafe for production."""
    from compliance_api.config import Settings
    from compliance_api.safety import Severity, database_findings, findings, unsafe

    settings = Settings()
    found = sorted(
        findings(settings, workers=workers) + asyncio.run(database_findings(settings)),
        key=lambda finding: finding.severity is not Severity.unsafe,
    )
    if as_json:
        print_json(
            {
                "deployment": settings.deployment.value,
                "findings": [{"severity": f.severity.value, "code": f.code, "message": f.message} for f in found],
            }
        )
    else:
        for finding in found:
            typer.echo(str(finding))
        blocking = len(unsafe(found))
        typer.echo(
            f"{blocking} unsafe, {len(found) - blocking} warning(s) ({settings.deployment.value} deployment)",
            err=True,
        )
    if unsafe(found):
        raise typer.Exit(1)
