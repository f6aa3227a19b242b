"""`compliance-api serve`: the command; what it runs is in `serving` (uvicorn), imported when it runs."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

import typer

from compliance_api.cli.common import refuse_unsafe
from compliance_api.cli.migrate import migrate_database
from compliance_api.kit.addresses import DEFAULT_HOST, DEFAULT_PORT


def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to bind (0: any free port, printed).")] = DEFAULT_PORT,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes; more than one needs REDIS_URL.")] = 1,
) -> None:
    """Run the API (in production, only when `compliance-api check` finds nothing unsafe)."""
    from compliance_api.cli import serving
    from compliance_api.config import Settings
    from compliance_api.server import uvicorn_options

    settings = Settings()
    if workers > 1 and not settings.redis_url:
        typer.echo(
            "error: --workers > 1 needs REDIS_URL: rate limits must be shared by all workers, "
            "and an in-process limiter per worker would multiply every limit by the number of workers.",
            err=True,
        )
        raise typer.Exit(2)
    refuse_unsafe(settings, workers=workers)
    sandbox_port = settings.sandbox_port_beside(port)
    if sandbox_port is not None and sandbox_port == port != 0:
        typer.echo(f"error: COMPLIANCE_SANDBOX_PORT is {port}, the port of production: pick another", err=True)
        raise typer.Exit(2)
    if settings.is_sqlite:
        asyncio.run(migrate_database(settings))
    try:
        settings.secret_key_bytes()  # fail before forking, and create the embedded secret once
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    # The webhook worker runs inside `serve` unless COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER says otherwise; the workers
    # build their settings from the environment, so that is where the default goes (only once we really serve).
    os.environ.setdefault("COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER", "true")

    def announce(bound: int, sandbox_bound: int | None) -> None:
        typer.echo(serving.listening_line(settings, host, bound, sandbox_bound))

    options = uvicorn_options(settings, host=host, port=port, workers=workers)
    serving.run_uvicorn("compliance_api.app:create_app", sandbox_port=sandbox_port, announce=announce, **options)
