"""`compliance-api purge-sandbox`: delete sandbox data past retention, keeping the documented fixtures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from compliance_api.cli.common import JsonOption, print_json, refuse_unsafe, run, sessions

if TYPE_CHECKING:
    from compliance_api.retention.service import PurgeReport

OlderThanOption = Annotated[
    int | None,
    typer.Option(
        "--older-than-days",
        min=1,
        max=30,
        help="Retention in days (1-30); default COMPLIANCE_SANDBOX_RETENTION_DAYS.",
        show_default=False,
    ),
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Count what would be deleted; delete nothing.")]


def purge_sandbox_command(
    older_than_days: OlderThanOption = None, dry_run: DryRunOption = False, as_json: JsonOption = False
) -> None:
    """Delete sandbox rows last written more than the retention period ago (production is never touched); the
    fixtures of `compliance-api demo` stay. Prints the rows deleted per table; run it daily."""
    from compliance_api.config import Settings
    from compliance_api.kit.clock import utcnow
    from compliance_api.retention.service import purge_sandbox

    settings = Settings()
    refuse_unsafe(settings)

    async def work() -> PurgeReport:
        async with sessions(settings) as sessionmaker:
            return await purge_sandbox(sessionmaker, settings, now=utcnow(), days=older_than_days, dry_run=dry_run)

    report = run(work)
    if as_json:
        print_json(report.as_json())
        return
    verb = "would delete" if dry_run else "deleted"
    typer.echo(f"sandbox rows last written before {report.cutoff.isoformat()}: {report.total} {verb}")
    for table, count in report.deleted.items():
        typer.echo(f"  {table}: {count}")
