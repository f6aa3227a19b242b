"""`compliance-api classifications purge|rescore`: retention of the audit trail, and law-change re-scoring."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from compliance_api.classify import service
from compliance_api.classify.rescore import RescoreReport, count_monitored, rescore
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.cli.common import EnvOption, JsonOption, print_json, progress, refuse_unsafe, run, transaction
from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment

app = typer.Typer(no_args_is_help=True, help="Manage the classification audit trail.")


@app.command("purge")
def purge(as_json: JsonOption = False) -> None:
    """Delete verdicts older than COMPLIANCE_CLASSIFICATION_RETENTION_YEARS (production) or
    COMPLIANCE_SANDBOX_RETENTION_DAYS (sandbox); run it daily, e.g. from cron."""
    settings = Settings()
    refuse_unsafe(settings)
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


@app.command("rescore")
def rescore_command(
    as_of: Annotated[
        dt.datetime | None,
        typer.Option(
            "--as-of", formats=["%Y-%m-%d"], help="Judge under the law in force on this date (default today)."
        ),
    ] = None,
    env: EnvOption = Environment.live,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report the changes without storing or sending them.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Re-score every monitored classification of the environment under the rulesets and thresholds in force on
    the date; a changed verdict is stored as a new verdict and sent as `classification.verdict_changed`. The worker
    runs this daily."""
    settings = Settings()
    refuse_unsafe(settings)
    retention = service.Retention(settings.classification_retention_years, settings.sandbox_retention_days)
    now = utcnow()
    day = as_of.date() if as_of is not None else now.date()

    async def work() -> RescoreReport:
        since = retention.cutoff(env, now)
        async with transaction(settings) as session:
            total = await count_monitored(session, env, since)
            with progress(total, "re-scoring") as on_page:
                return await rescore(
                    session,
                    packaged_rulesets(),
                    env,
                    as_of=day,
                    now=now,
                    since=since,
                    dry_run=dry_run,
                    progress=on_page,
                )

    report = run(work)
    if as_json:
        print_json(report.as_json())
        return
    action = "would change" if dry_run else "changed"
    typer.echo(f"{env.value}, as of {day.isoformat()}: {report.examined} monitored, {len(report.changes)} {action}")
    for change in report.changes:
        label = f" ({change.reference})" if change.reference else ""
        typer.echo(f"  {change.classification_id}{label}: {change.previous_verdict} -> {change.new_verdict}")
