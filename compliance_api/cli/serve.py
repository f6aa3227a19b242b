from __future__ import annotations

import asyncio
import os
from typing import Annotated

import typer
import uvicorn

from compliance_api.cli.common import refuse_unsafe
from compliance_api.cli.migrate import migrate_database
from compliance_api.config import Settings
from compliance_api.server import uvicorn_options


def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind.")] = 8000,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes; more than one needs REDIS_URL.")] = 1,
) -> None:
    """Run the API (in production, only when `compliance-api check` finds nothing unsafe)."""
    settings = Settings()
    if workers > 1 and not settings.redis_url:
        typer.echo(
            "error: --workers > 1 needs REDIS_URL: rate limits must be shared by all workers, "
            "and an in-process limiter per worker would multiply every limit by the number of workers.",
            err=True,
        )
        raise typer.Exit(2)
    refuse_unsafe(settings, workers=workers)
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
    uvicorn.run("compliance_api.app:create_app", **uvicorn_options(settings, host=host, port=port, workers=workers))
