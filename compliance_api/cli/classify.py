"""`compliance-api classify bulk FILE.csv --out RESULT.csv`: the Dutch or a cross-border test for every row of a CSV,
through a deployment's API (`--base-url` and a token) or directly in this installation's database (`--email`), in
batches whose Idempotency-Keys make a run safe to repeat (`cli/bulk/`)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import httpx
import typer

from compliance_api.classify.schemas import MAX_BATCH_ITEMS
from compliance_api.cli.bulk.over_http import TOKEN_ENV, Retries
from compliance_api.cli.bulk.rows import Row
from compliance_api.cli.bulk.runner import Report
from compliance_api.cli.common import read_input, refuse_unsafe, run
from compliance_api.config import Settings
from compliance_api.kit.environment_name import Environment

app = typer.Typer(no_args_is_help=True, help="Classify engagements in bulk.")

CLI_TOKEN_ID = uuid.UUID(int=0)
"""The `token_id` of verdicts made by this command in the database: no API token asked for them."""
SHOWN_ERRORS = 20
"""Refused rows named on stderr; the results file names them all."""


async def _in_database(
    settings: Settings, email: str, env: Environment, rows: Sequence[Row], batch_size: int, run_id: str
) -> Report:
    from compliance_api.accounts import service as accounts_service
    from compliance_api.auth.caller import Caller
    from compliance_api.classify.ruleset import packaged_rulesets
    from compliance_api.cli.bulk.in_database import DatabaseSender
    from compliance_api.cli.bulk.runner import classify_rows
    from compliance_api.db import create_engine, create_sessionmaker
    from compliance_api.idempotency.service import Idempotency
    from compliance_api.kit.batch_writer import batch_writer_for
    from compliance_api.kit.group_commit import GroupCommit
    from compliance_api.ratelimit.tiers import tier_for

    engine = create_engine(settings.resolved_database_url)
    audit = GroupCommit(batch_writer_for(engine))
    try:
        sessionmaker = create_sessionmaker(engine)
        async with sessionmaker() as session:
            user = await accounts_service.get_by_email_or_raise(session, email=email)
        caller = Caller(user.id, CLI_TOKEN_ID, env, user.plan, user.kind, tier_for(user.plan, env), "cli")
        sender = DatabaseSender(
            caller,
            audit,
            sessionmaker,
            Idempotency(settings.secret_key_bytes(), sessionmaker),
            packaged_rulesets(),
            str(settings.public_base_url).rstrip("/"),
        )
        return await classify_rows(rows, sender, batch_size=batch_size, run_id=run_id, concurrency=1)
    finally:
        await audit.close()
        await engine.dispose()


async def over_http_run(
    rows: Sequence[Row],
    http: httpx.AsyncClient,
    retries: Retries,
    *,
    batch_size: int,
    run_id: str,
    concurrency: int,
) -> Report:
    """The rows classified through the API that `http` talks to."""
    from compliance_api.cli.bulk.over_http import HttpSender
    from compliance_api.cli.bulk.runner import classify_rows

    async with http:
        sender = HttpSender(http, retries)
        return await classify_rows(rows, sender, batch_size=batch_size, run_id=run_id, concurrency=concurrency)


def _option_errors(
    out: Path, base_url: str | None, token: str | None, email: str | None, env: Environment | None
) -> str | None:
    """What is wrong with the options, if anything, before any row is sent."""
    if not out.parent.is_dir():
        return f"--out: folder {out.parent} does not exist"
    if base_url is None:
        return None if email else "give --email (classify in this installation's database) or --base-url and a token"
    if email is not None or env is not None:
        return "--email and --env are for the database; over HTTP the token decides the account and environment"
    if not token:
        return f"--base-url needs a token: --token or the environment variable {TOKEN_ENV}"
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        url = httpx.URL()
    if url.scheme not in ("http", "https") or not url.host:
        return f"--base-url must be an http:// or https:// URL, not {base_url!r}"
    return None


def _summary(rows: Sequence[Row], report: Report, out: Path) -> str:
    verdicts = [outcome.verdict for outcome in report.outcomes.values() if outcome.verdict]
    counts = ", ".join(f"{v}: {verdicts.count(v)}" for v in ("safe", "risky", "unsafe"))
    replayed = f"; {report.replayed} answered by an earlier run" if report.replayed else ""
    refused = len(rows) - len(verdicts)
    return f"{len(rows)} rows, {len(verdicts)} classified ({counts}{replayed}), {refused} refused; {out}"


def _show_errors(rows: Sequence[Row], report: Report, out: Path) -> None:
    errors = [report.outcomes[row.line].error for row in rows if report.outcomes[row.line].error]
    for error in errors[:SHOWN_ERRORS]:
        typer.echo(error, err=True)
    if len(errors) > SHOWN_ERRORS:
        typer.echo(f"… and {len(errors) - SHOWN_ERRORS} more refused rows, each named in {out}", err=True)


@app.command("bulk")
def bulk(
    path: Annotated[
        Path, typer.Argument(help="A UTF-8 CSV: `country` (empty or NL, FR, DE, BE), the test's inputs, `reference`.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Where to write line, the input, id, verdict, score, errors.")],
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="Classify through this deployment's API, e.g. https://api.example.com."),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar=TOKEN_ENV,
            show_envvar=True,
            help="The API token for --base-url; better in the environment variable, which the process list hides.",
        ),
    ] = None,
    email: Annotated[
        str | None, typer.Option("--email", help="Without --base-url: the account the verdicts belong to.")
    ] = None,
    env: Annotated[
        Environment | None, typer.Option("--env", help="Without --base-url: live (production, default) or test.")
    ] = None,
    as_of: Annotated[
        dt.datetime | None,
        typer.Option("--as-of", formats=["%Y-%m-%d"], help="Judge under the law in force on this date."),
    ] = None,
    batch_size: Annotated[
        int,
        typer.Option(
            "--batch-size", min=1, max=MAX_BATCH_ITEMS, help="Rows per batch, at most 1000 (blocks of 1000 rows)."
        ),
    ] = 100,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, max=16, help="Batches in flight (HTTP).")] = 4,
    retries: Annotated[
        int, typer.Option("--retries", min=0, help="Retries of a batch after a timeout or 5xx (HTTP); 429s wait.")
    ] = 5,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Seconds to wait for an answer (HTTP).")] = 60,
    run_id: Annotated[
        str, typer.Option("--run-id", help="Part of every Idempotency-Key: another run id classifies again.")
    ] = "",
) -> None:
    """Classify every row under its test (the `country` column), in batches, each under an Idempotency-Key derived
    from its rows and their lines: running the same command on the same file again, within 24 hours, resumes an
    interrupted run without classifying any row twice. Each verdict is kept as an audit record of the account. A row
    that cannot be classified gets its error (`line N: field F: message`) in the results and on stderr."""
    from compliance_api.cli.bulk import over_http
    from compliance_api.cli.bulk.rows import read_rows, write_results

    problem = _option_errors(out, base_url, token, email, env)
    if problem is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)
    day = as_of.date().isoformat() if as_of is not None else None

    async def work() -> tuple[list[str], list[Row], Report]:
        header, rows = read_rows(read_input(path), day)
        if base_url is not None and token is not None:
            http = over_http.client(base_url, token, timeout)
            waits = Retries(attempts=retries, tell=lambda message: typer.echo(message, err=True))
            report = await over_http_run(
                rows, http, waits, batch_size=batch_size, run_id=run_id, concurrency=concurrency
            )
        else:
            assert email is not None
            settings = Settings()
            refuse_unsafe(settings)
            report = await _in_database(settings, email, env or Environment.live, rows, batch_size, run_id)
        return header, rows, report

    header, rows, report = run(work)
    write_results(out, header, rows, report.outcomes)
    _show_errors(rows, report, out)
    typer.echo(_summary(rows, report, out))
