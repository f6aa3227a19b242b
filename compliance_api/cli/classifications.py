"""`compliance-api classifications purge`: delete audit records past their retention period."""

from __future__ import annotations

import typer

from compliance_api.classify import service
from compliance_api.cli.common import JsonOption, print_json, run, transaction
from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow

app = typer.Typer(no_args_is_help=True, help="Manage the classification audit trail.")


@app.command("purge")
def purge(as_json: JsonOption = False) -> None:
    """Delete verdicts older than COMPLIANCE_CLASSIFICATION_RETENTION_YEARS (production) or
    COMPLIANCE_SANDBOX_RETENTION_DAYS (sandbox); run it daily, e.g. from cron."""
    settings = Settings()
    retention = service.Retention(settings.classification_retention_years, settings.sandbox_retention_days)

    async def work() -> None:
        async with transaction(settings) as session:
            removed = await service.purge_expired(session, retention, utcnow())
        counts = {environment.value: count for environment, count in removed.items()}
        if as_json:
            print_json({"deleted": counts})
        else:
            typer.echo(", ".join(f"{env}: {count} deleted" for env, count in counts.items()))

    run(work)
