"""What every command shares: settings, a database session, clean failures and JSON output."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import orjson
import typer

from compliance_api.kit.environment_name import Environment

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

    from compliance_api.accounts.models import User
    from compliance_api.config import Settings
    from compliance_api.kit.addresses import Bases

# Every command module imports this one, and `--help` imports the command modules: what is heavy (the database
# layer, the services, the settings) is imported inside the functions that use it, so that a command loads only
# what it runs (tests/cli/test_startup.py holds it).

T = TypeVar("T")

EnvOption = Annotated[Environment, typer.Option("--env", help="live (production) or test (sandbox).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def user_errors() -> tuple[type[Exception], ...]:
    """The exceptions a command reports as `error: …` (exit 1) rather than a traceback."""
    from compliance_api.accounts.errors import AccountError
    from compliance_api.auth.service import TokenNotFound

    return (AccountError, TokenNotFound, ValueError)


def served_bases(settings: Settings, host: str | None = None, port: int | None = None) -> Bases:
    """Where production and the sandbox of `serve --host HOST --port PORT` are reached (for printed links); the
    defaults are `serve`'s own."""
    from compliance_api.kit.addresses import DEFAULT_HOST, DEFAULT_PORT, listening_bases

    host, port = host or DEFAULT_HOST, port or DEFAULT_PORT
    return listening_bases(
        settings.public_base_url, host, port, settings.sandbox_port_beside(port), settings.sandbox_hosts
    )


@asynccontextmanager
async def sessions(settings: Settings | None = None) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """A sessionmaker on an engine of its own, disposed when the block ends."""
    from compliance_api.config import Settings
    from compliance_api.db import create_engine, create_sessionmaker

    engine = create_engine((settings or Settings()).resolved_database_url)
    try:
        yield create_sessionmaker(engine)
    finally:
        await engine.dispose()


@asynccontextmanager
async def transaction(settings: Settings | None = None) -> AsyncIterator[AsyncSession]:
    """One session in one transaction: committed when the block ends, rolled back on any error."""
    async with sessions(settings) as sessionmaker, sessionmaker.begin() as session:
        yield session


@asynccontextmanager
async def account_transaction(email: str, settings: Settings | None = None) -> AsyncIterator[tuple[AsyncSession, User]]:
    """One transaction (as `transaction`) and the account `email` names in it; no such account is a user error."""
    from compliance_api.accounts import service as accounts_service

    async with transaction(settings) as session:
        yield session, await accounts_service.get_by_email_or_raise(session, email=email)


def refuse_unsafe(settings: Settings, *, workers: int = 1) -> None:
    """What every long-running or scheduled command (`serve`, `worker`, the daily purges and re-score) runs first:
    `compliance-api check`. Unknown `COMPLIANCE_*` variables are named on stderr; in production, any unsafe finding
    stops the command (exit 2), naming each."""
    from compliance_api.safety import findings, unsafe

    found = findings(settings, workers=workers)
    for finding in found:
        if finding.code == "unknown_setting":
            typer.echo(f"warning: {finding.code}: {finding.message}", err=True)
    blocking = unsafe(found)
    if settings.is_production and blocking:
        typer.echo(
            "error: refusing to start in production with unsafe settings (see `compliance-api check`):", err=True
        )
        for finding in blocking:
            typer.echo(f"  {finding.code}: {finding.message}", err=True)
        raise typer.Exit(2)


def read_input(path: Path) -> bytes:
    """The bytes of an input file; a file that cannot be read is a user error."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None


def run(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a command's coroutine; a user error, or an API error the services raise, prints `error: …` on stderr and
    exits with 1."""
    from compliance_api.errors import ApiError

    try:
        return asyncio.run(work())
    except user_errors() as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    except ApiError as exc:
        typer.echo(f"error: {exc.detail}", err=True)
        raise typer.Exit(1) from None


def print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


PROGRESS_MIN_ROWS = 10_000


@contextmanager
def progress(total: int, label: str, *, min_rows: int = PROGRESS_MIN_ROWS) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr when it is a terminal and the work is long (`min_rows` rows or more); otherwise
    nothing."""
    if total < min_rows or not sys.stderr.isatty():
        yield None
        return
    with typer.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update
