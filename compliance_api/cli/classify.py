"""`compliance-api classify bulk FILE.csv --out RESULT.csv`: the Dutch or a cross-border test for every row of a CSV,
through a deployment's API (`--base-url` and a token) or directly in this installation's database (`--email`), in
batches whose Idempotency-Keys make a run safe to repeat (`cli/bulk/`).

What a run needs (the database layer, httpx, the batch code) is imported by the functions that use it, so that
`--help` stays light."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import signal
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, BinaryIO

import typer

from compliance_api.classify.batch_limit import MAX_BATCH_ITEMS
from compliance_api.kit.environment_name import Environment

if TYPE_CHECKING:
    import httpx

    from compliance_api.cli.bulk.over_http import Retries
    from compliance_api.cli.bulk.rows import ResultWriter, Row
    from compliance_api.cli.bulk.runner import Pacing, Report
    from compliance_api.config import Settings

app = typer.Typer(no_args_is_help=True, help="Classify engagements in bulk.")

CLI_TOKEN_ID = uuid.UUID(int=0)
"""The `token_id` of verdicts made by this command in the database: no API token asked for them."""
TOKEN_ENV = "COMPLIANCE_API_TOKEN"  # noqa: S105 (a variable name, not a secret)


async def _in_database(
    settings: Settings,
    email: str,
    env: Environment,
    rows: Iterable[Row],
    write: ResultWriter,
    report: Report,
    batch_size: int,
    run_id: str,
) -> None:
    from compliance_api.accounts import service as accounts_service
    from compliance_api.auth.caller import Caller
    from compliance_api.classify.ruleset import packaged_rulesets
    from compliance_api.cli.bulk.in_database import DatabaseSender
    from compliance_api.cli.bulk.runner import Pacing, classify_rows
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
        await classify_rows(rows, sender, write, report, Pacing(batch_size, run_id, concurrency=1))
    finally:
        await audit.close()
        await engine.dispose()


async def over_http_run(
    rows: Iterable[Row],
    http: httpx.AsyncClient,
    retries: Retries,
    write: ResultWriter,
    report: Report,
    pacing: Pacing,
) -> Report:
    """The rows classified through the API that `http` talks to."""
    from compliance_api.cli.bulk.over_http import HttpSender
    from compliance_api.cli.bulk.runner import classify_rows

    async with http:
        sender = HttpSender(http, retries)
        return await classify_rows(rows, sender, write, report, pacing)


def _option_errors(
    out: Path, base_url: str | None, token: str | None, email: str | None, env: Environment | None
) -> str | None:
    """What is wrong with the options, if anything, before any row is sent."""
    import httpx

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


def _summary(report: Report, out: Path) -> str:
    counts = ", ".join(f"{v}: {report.verdicts[v]}" for v in ("safe", "risky", "unsafe"))
    replayed = f"; {report.replayed} answered by an earlier run" if report.replayed else ""
    classified = report.verdicts.total()
    return f"{report.rows} rows, {classified} classified ({counts}{replayed}), {report.refused} refused; {out}"


def _show_errors(report: Report, out: Path) -> None:
    for error in report.errors:
        typer.echo(error, err=True)
    if report.refused > len(report.errors):
        typer.echo(f"… and {report.refused - len(report.errors)} more refused rows, each named in {out}", err=True)


def _stop_on_signals(stopped: list[signal.Signals]) -> None:
    """Ctrl-C and SIGTERM cancel the run (its batches in flight, then the results file), remembering which came. Only
    a program's main thread can take signals; elsewhere (a test calling the command in a thread) nothing is done."""
    loop, task = asyncio.get_running_loop(), asyncio.current_task()
    assert task is not None

    def stop(signum: signal.Signals) -> None:
        stopped.append(signum)
        task.cancel()

    with contextlib.suppress(ValueError, RuntimeError):
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop, signum)


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[BinaryIO]:
    try:
        source = path.open("rb")
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    with source:
        yield source


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
    from compliance_api.cli.bulk.over_http import Retries
    from compliance_api.cli.bulk.rows import read_rows, results_file
    from compliance_api.cli.bulk.runner import RESUME, Pacing, Report
    from compliance_api.cli.common import progress, refuse_unsafe, run
    from compliance_api.config import Settings

    problem = _option_errors(out, base_url, token, email, env)
    if problem is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)
    day = as_of.date().isoformat() if as_of is not None else None
    report, stopped = Report(), list[signal.Signals]()

    async def work() -> None:
        _stop_on_signals(stopped)
        with _opened(path) as source:  # a first pass checks the whole file before anything is sent
            total = sum(1 for _ in read_rows(source, day)[1])
        with _opened(path) as source, progress(total, "classifying", min_rows=1) as advance:
            header, rows = read_rows(source, day)
            with results_file(out, header, advance) as write:
                if base_url is not None and token is not None:
                    http = over_http.client(base_url, token, timeout)
                    waits = Retries(attempts=retries, tell=lambda message: typer.echo(message, err=True))
                    await over_http_run(rows, http, waits, write, report, Pacing(batch_size, run_id, concurrency))
                else:
                    assert email is not None
                    settings = Settings()
                    refuse_unsafe(settings)
                    await _in_database(
                        settings, email, env or Environment.live, rows, write, report, batch_size, run_id
                    )

    try:
        run(work)
    except asyncio.CancelledError:
        if not stopped:
            raise
        typer.echo(f"stopped by {stopped[0].name}: {report.answered()}, no results written; {RESUME}", err=True)
        raise typer.Exit(128 + stopped[0]) from None
    _show_errors(report, out)
    typer.echo(_summary(report, out))
