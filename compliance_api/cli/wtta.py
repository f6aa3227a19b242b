"""`compliance-api wtta import PATH|URL`: load a register file into one environment's cache, in one transaction.

The register's modules are imported when the command runs, not at module level, so that `--help` stays light."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from compliance_api.cli.common import EnvOption, JsonOption, print_json, run, transaction
from compliance_api.kit.environment_name import Environment

if TYPE_CHECKING:
    from compliance_api.config import Settings
    from compliance_api.wtta.download import Fetched
    from compliance_api.wtta.models import WttaImport
    from compliance_api.wtta.register_file import Row
    from compliance_api.wtta.register_import import ImportSource, RegisterImportResult

app = typer.Typer(no_args_is_help=True, help="The WTTA admission register cache.")

PROGRESS_EVERY_ROWS = 1000


class RowRateColumn(ProgressColumn):
    """Rows read so far and rows per second (the bar itself tracks bytes, which give the time left)."""

    def render(self, task: Task) -> Text:
        rows = int(task.fields.get("rows", 0))
        elapsed = task.elapsed or 0.0
        rate = f"{rows / elapsed:,.0f} rows/s" if elapsed > 0 else "- rows/s"
        return Text(f"{rows:,} rows  {rate}")


def make_progress(console: Console, *, quiet: bool) -> Progress:
    """A progress display on `console`; disabled with --quiet or when the console is not a terminal."""
    enabled = not quiet and console.is_terminal
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        RowRateColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled,
        redirect_stdout=enabled,
        redirect_stderr=enabled,
    )


def is_url(location: str) -> bool:
    return location.startswith(("http://", "https://"))


@app.command("import")
def import_register(
    location: Annotated[str, typer.Argument(help="A CSV or JSON register file, or an http(s) URL serving one.")],
    source: Annotated[str | None, typer.Option(help="Stored on every row; default: the file name or URL.")] = None,
    source_url: Annotated[str | None, typer.Option(help="Where the source is published; default: the URL.")] = None,
    full: Annotated[
        bool, typer.Option("--full", help="The file is a complete snapshot: mark cached numbers it lacks as missing.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")] = False,
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Validate every row and apply the whole file in one transaction; a bad row changes nothing."""
    from compliance_api.config import Settings
    from compliance_api.wtta.register_import import ImportSource

    if not is_url(location) and not Path(location).is_file():
        typer.echo(f"error: {location}: no such file", err=True)
        raise typer.Exit(1)
    settings = Settings()
    origin = ImportSource(
        location=location,
        source=source or (location if is_url(location) else Path(location).name),
        source_url=source_url or (location if is_url(location) else None),
    )
    with make_progress(Console(stderr=True), quiet=quiet) as progress:
        result = run(lambda: _import(settings, origin, env=env, full=full, progress=progress))
    if as_json:
        print_json(result.as_json())
    else:
        typer.echo(_summary(result))


async def _import(
    settings: Settings, origin: ImportSource, *, env: Environment, full: bool, progress: Progress
) -> RegisterImportResult:
    from compliance_api.cli.migrate import migrate_database
    from compliance_api.wtta import register_import, service
    from compliance_api.wtta.download import Fetched
    from compliance_api.wtta.register_file import read_rows
    from compliance_api.wtta.register_import import ImportSource

    if settings.is_sqlite:
        await migrate_database(settings)
    if is_url(origin.location):
        async with transaction(settings) as session:
            previous = await service.last_url_import(session, environment=env, url=origin.location)
        download = _download(origin.location, previous, progress)
    else:
        download = nullcontext(Fetched(Path(origin.location), None, None))
    with download as fetched:
        checked = ImportSource(origin.location, origin.source, origin.source_url, fetched.etag, fetched.last_modified)
        async with transaction(settings) as session:
            if fetched.path is None:
                return await register_import.record_not_modified(session, environment=env, origin=checked, full=full)
            task = progress.add_task("reading", total=fetched.path.stat().st_size, rows=0)
            with fetched.path.open("rb") as file:
                rows = _counted(read_rows(file, lambda n: progress.advance(task, n)), progress, task)
                return await register_import.import_rows(
                    session,
                    environment=env,
                    rows=rows,
                    origin=checked,
                    full=full,
                    on_stage=lambda stage: progress.update(task, description=stage),
                )


def _download(url: str, previous: WttaImport | None, progress: Progress) -> AbstractContextManager[Fetched]:
    from compliance_api.wtta.download import fetch

    task = progress.add_task("downloading", total=None, rows=0)
    return fetch(
        url,
        etag=previous.etag if previous else None,
        last_modified=previous.last_modified if previous else None,
        on_total=lambda total: progress.update(task, total=total),
        on_bytes=lambda n: progress.advance(task, n),
    )


def _counted(rows: Iterable[Row], progress: Progress, task: TaskID) -> Iterator[Row]:
    count = 0
    for row in rows:
        count += 1
        if count % PROGRESS_EVERY_ROWS == 0:
            progress.update(task, rows=count)
        yield row
    progress.update(task, rows=count)


def _summary(result: RegisterImportResult) -> str:
    if result.not_modified:
        return f"{result.environment}: the register is unchanged since the last download (304); nothing imported"
    return (
        f"{result.environment}: {result.rows_read} rows read, {result.rows_created} new, {result.rows_changed} "
        f"changed ({result.status_changes} status changes), {result.rows_unchanged} unchanged, "
        f"{result.rows_missing} marked missing"
    )
