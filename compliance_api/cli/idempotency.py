"""`compliance-api idempotency purge`: delete stored Idempotency-Key results older than 24 hours."""

from __future__ import annotations

import typer

from compliance_api.cli.common import JsonOption, print_json, refuse_unsafe, run, transaction

app = typer.Typer(no_args_is_help=True, help="Manage stored Idempotency-Key results.")


@app.command("purge")
def purge(as_json: JsonOption = False) -> None:
    """Delete expired records (reads ignore them already); run it daily, e.g. from cron."""
    from compliance_api.config import Settings
    from compliance_api.idempotency import service as idempotency
    from compliance_api.kit.clock import utcnow

    settings = Settings()
    refuse_unsafe(settings)

    async def work() -> int:
        async with transaction(settings) as session:
            return await idempotency.purge_expired(session, utcnow())

    removed = run(work)
    if as_json:
        print_json({"deleted": removed})
    else:
        typer.echo(f"{removed} deleted")
