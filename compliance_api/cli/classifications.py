"""`compliance-api classifications purge|rescore|export`: retention of the audit trail, law-change re-scoring, and
the audit export of a period's dossiers."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Annotated

import typer

from compliance_api.cli.common import (
    EnvOption,
    JsonOption,
    print_json,
    progress,
    refuse_unsafe,
    run,
    served_bases,
    sessions,
    transaction,
)
from compliance_api.kit.environment_name import Environment

app = typer.Typer(no_args_is_help=True, help="Manage the classification audit trail.")


@app.command("purge")
def purge(as_json: JsonOption = False) -> None:
    """Delete verdicts older than COMPLIANCE_CLASSIFICATION_RETENTION_YEARS (production) or
    COMPLIANCE_SANDBOX_RETENTION_DAYS (sandbox); run it daily, e.g. from cron."""
    from compliance_api.classify import service
    from compliance_api.config import Settings
    from compliance_api.kit.clock import utcnow

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
    from compliance_api.classify import service
    from compliance_api.classify.rescore import RescoreReport, count_monitored, rescore
    from compliance_api.classify.ruleset import packaged_rulesets
    from compliance_api.config import Settings
    from compliance_api.kit.clock import utcnow

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


def _export_target(out: Path, force: bool) -> Path:
    """The zip to write: its folder must exist, and an existing file is replaced only with --force."""
    if not out.parent.is_dir():
        raise typer.BadParameter(f"folder {out.parent} does not exist", param_hint="--out")
    if out.exists() and not force:
        raise typer.BadParameter(f"{out} exists; pass --force to replace it", param_hint="--out")
    return out


@app.command("export")
def export_command(
    start: Annotated[
        dt.datetime,
        typer.Option("--from", formats=["%Y-%m-%d"], help="First day of the period (UTC), YYYY-MM-DD."),
    ],
    end: Annotated[
        dt.datetime,
        typer.Option("--to", formats=["%Y-%m-%d"], help="Last day of the period (UTC, included), YYYY-MM-DD."),
    ],
    out: Annotated[Path, typer.Option("--out", help="The zip file to write, e.g. dossiers-2026-q1.zip.")],
    env: EnvOption = Environment.live,
    account: Annotated[
        str | None, typer.Option("--account", help="Only this account's classifications (its e-mail).")
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, max=64, help="Processes rendering PDFs (default: one per CPU).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace --out if it exists.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Write the dossier of every classification made in the period (PDF and signed JSON each, as
    `GET /v1/classifications/{id}/dossier` answers them) and an index.csv into one zip file, with what an auditor
    needs to check it offline: index.jws (the index, signed), jwks.json, signing-certificate.pem, verify.py and
    VERIFY-<en|nl|fr|de>.txt. The file appears only when complete: a failure or Ctrl-C leaves no file behind, and a
    second export to the same --out while one runs fails. A progress bar shows on a terminal."""
    from compliance_api.accounts import service as accounts_service
    from compliance_api.classify import service
    from compliance_api.classify.ruleset import packaged_rulesets
    from compliance_api.config import Deployment, Settings
    from compliance_api.dossier.document import certificates_url, jwks_url
    from compliance_api.dossier.export import ExportOptions, Scope, export_period
    from compliance_api.dossier.service import Period, count_period
    from compliance_api.kit.clock import utcnow
    from compliance_api.passport.signing import SigningKeys

    if end < start:
        raise typer.BadParameter(f"--to {end:%Y-%m-%d} is before --from {start:%Y-%m-%d}", param_hint="--to")
    target = _export_target(out, force)
    settings = Settings()
    refuse_unsafe(settings)
    retention = service.Retention.of(settings)
    keys = SigningKeys(
        settings.resolved_signing_keys_dir,
        generate=settings.deployment is Deployment.embedded,
        operator=settings.operator_name,
    )
    now = utcnow()
    bases = served_bases(settings)
    options = ExportOptions(
        rulesets=packaged_rulesets(),
        key=keys.signing_key(env),
        pdf_key=keys.pdf_signer(env),
        jwks=jwks_url(bases, env),
        certificates=certificates_url(bases, env),
        issued_at=now,
        workers=workers or os.cpu_count() or 1,
    )
    scope = Scope(env.value, start.date(), end.date(), account)

    async def work() -> int:
        async with sessions(settings) as sessionmaker, sessionmaker() as session:
            owner = await accounts_service.get_by_email_or_raise(session, email=account) if account else None
            period = Period(
                env,
                start.replace(tzinfo=dt.UTC),
                (end + dt.timedelta(days=1)).replace(tzinfo=dt.UTC),
                owner.id if owner else None,
            )
            since = retention.cutoff(env, now)
            total = await count_period(session, period, since)
            with progress(total, "dossiers", min_rows=1) as on_dossier:
                return await export_period(session, period, since, target, options, scope, on_dossier, replace=force)

    written = run(work)
    summary = {
        "out": str(target),
        "environment": env.value,
        "from": start.date().isoformat(),
        "to": end.date().isoformat(),
        "dossiers": written,
    }
    if as_json:
        print_json(summary)
        return
    typer.echo(f"{target}: {written} dossiers of {env.value}, {summary['from']} to {summary['to']} (UTC)")
