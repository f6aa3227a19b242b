"""`compliance-api webhooks add|list` (an operator manages a user's endpoints) and `compliance-api worker`."""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING, Annotated

import typer

from compliance_api.cli.common import (
    EnvOption,
    JsonOption,
    account_transaction,
    print_json,
    refuse_unsafe,
    run,
    sessions,
    transaction,
)
from compliance_api.kit.environment_name import Environment

if TYPE_CHECKING:
    from compliance_api.webhooks.models import WebhookEndpoint

app = typer.Typer(no_args_is_help=True, help="Manage webhook endpoints.")


def _listed(row: WebhookEndpoint) -> dict[str, object]:
    return {
        "id": str(row.id),
        "url": row.url,
        "environment": str(row.environment),
        "enabled_events": row.enabled_events,
        "status": str(row.status),
        "description": row.description,
        "created_at": row.created_at.isoformat(),
    }


@app.command("add")
def add(
    email: str,
    url: str,
    events: Annotated[
        list[str] | None, typer.Option("--event", help="An event type to receive (repeatable); default `*`, all.")
    ] = None,
    description: Annotated[str, typer.Option("--description", help="A note on the endpoint.")] = "",
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Add an endpoint for a user and print its `whsec_` secret, once."""
    from compliance_api.config import Settings
    from compliance_api.kit.clock import utcnow
    from compliance_api.webhooks import service, ssrf
    from compliance_api.webhooks.catalogue import EVENT_TYPES
    from compliance_api.webhooks.signing import secret_box

    wanted = events or ["*"]
    unknown = [e for e in wanted if e != "*" and e not in EVENT_TYPES]
    if unknown:
        typer.echo(f"error: unknown event type(s) {', '.join(unknown)}; known: {', '.join(EVENT_TYPES)}", err=True)
        raise typer.Exit(1)
    settings = Settings()

    async def work() -> None:
        async with account_transaction(email, settings) as (session, user):
            row, secret = await service.create(
                session,
                service.EndpointOwner(user.id, env),
                url=url,
                enabled_events=wanted,
                description=description,
                enabled=True,
                policy=ssrf.policy_for(settings, env),
                box=secret_box(settings),
                now=utcnow(),
            )
        if as_json:
            print_json({**_listed(row), "secret": secret})
        else:
            typer.echo(secret)

    run(work)


@app.command("list")
def list_endpoints(email: str, env: EnvOption = Environment.live, as_json: JsonOption = False) -> None:
    """List a user's endpoints in one environment: id, status, URL, events."""
    from compliance_api.webhooks import service

    async def work() -> None:
        async with account_transaction(email) as (session, user):
            rows = await service.list_endpoints(session, service.EndpointOwner(user.id, env))
        if as_json:
            print_json({"endpoints": [_listed(r) for r in rows]})
            return
        for r in rows:
            typer.echo(f"{r.id}  {r.status:8}  {r.url}  {','.join(r.enabled_events)}")

    run(work)


@app.command("reseal")
def reseal(as_json: JsonOption = False) -> None:
    """Seal every endpoint's signing secrets under the current COMPLIANCE_SECRET_KEY (step 2 of a secret rotation,
    before COMPLIANCE_SECRET_KEY_PREVIOUS is removed); both environments, one transaction."""
    from compliance_api.config import Settings
    from compliance_api.webhooks.service import reseal_secrets
    from compliance_api.webhooks.signing import secret_box

    settings = Settings()

    async def work() -> int:
        box = secret_box(settings)
        async with transaction(settings) as session:
            return await reseal_secrets(session, box)

    count = run(work)
    if as_json:
        print_json({"resealed": count})
    else:
        typer.echo(f"{count} endpoints resealed under the current secret")


def worker(
    once: Annotated[bool, typer.Option("--once", help="One round (dispatch, deliver a batch), then exit.")] = False,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=65535,
            help="Serve Prometheus metrics (delivery attempts) at /metrics on this port "
            "(not when COMPLIANCE_METRICS_ENABLED=false).",
        ),
    ] = None,
    metrics_host: Annotated[str, typer.Option(help="Address the metrics port binds.")] = "127.0.0.1",
) -> None:
    """Deliver webhooks, run the daily purges and refresh the WTTA register from COMPLIANCE_WTTA_REGISTER_URL until
    SIGTERM/SIGINT; run as many as you like on PostgreSQL (one on SQLite); in production, only when
    `compliance-api check` finds nothing unsafe."""
    from compliance_api.config import Settings
    from compliance_api.logging import configure_logging
    from compliance_api.retention.jobs import run_daily
    from compliance_api.webhooks.signing import secret_box
    from compliance_api.webhooks.worker import Worker
    from compliance_api.wtta.refresh import run_wtta_refresh

    settings = Settings()
    refuse_unsafe(settings)
    configure_logging(settings.log_level)  # one JSON line per event on stdout, as the API writes them

    async def work() -> None:
        if metrics_port is not None and settings.metrics_enabled:
            _serve_metrics(metrics_host, metrics_port)
        async with sessions(settings) as sessionmaker:
            delivery = Worker(settings, sessionmaker, secret_box(settings))
            try:
                if once:
                    typer.echo(f"{await delivery.run_once()} attempts", err=True)
                    return
                stop = asyncio.Event()
                loop = asyncio.get_running_loop()
                for sig in (signal.SIGTERM, signal.SIGINT):
                    loop.add_signal_handler(sig, stop.set)
                await asyncio.gather(
                    delivery.run(stop),
                    run_daily(sessionmaker, settings, stop),
                    run_wtta_refresh(sessionmaker, settings, stop),
                )
            finally:
                await delivery.close()

    run(work)


def _serve_metrics(host: str, port: int) -> None:
    """Prometheus's own HTTP server on a daemon thread (it ends with the process); a port in use is a user error."""
    from prometheus_client import start_http_server

    try:
        start_http_server(port, addr=host)
    except OSError as exc:
        raise ValueError(f"cannot serve metrics on {host}:{port}: {exc.strerror}") from None
