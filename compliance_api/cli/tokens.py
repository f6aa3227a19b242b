from __future__ import annotations

import uuid
from typing import Annotated

import typer

from compliance_api.cli.common import EnvOption, JsonOption, account_transaction, print_json, run, transaction
from compliance_api.kit.environment_name import Environment

app = typer.Typer(no_args_is_help=True, help="Manage API tokens.")


@app.command("create")
def create(
    email: str,
    name: Annotated[str, typer.Option("--name", help="A label to recognise the token by.")] = "default",
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Create a token and print it, once: it is stored only as a hash."""
    from compliance_api.auth import service as auth_service
    from compliance_api.config import Settings

    settings = Settings()

    async def work() -> None:
        async with account_transaction(email, settings) as (session, user):
            row, secret = await auth_service.create(
                session, user=user, environment=env, name=name, pepper=settings.secret_key_bytes()
            )
        if as_json:
            print_json({"id": str(row.id), "token": secret, "environment": row.environment, "name": row.name})
        else:
            typer.echo(secret)

    run(work)


@app.command("list")
def list_tokens(
    email: str,
    env: Annotated[Environment | None, typer.Option("--env", help="Only this environment.")] = None,
    as_json: JsonOption = False,
) -> None:
    """List a user's tokens: id, name, environment, last four characters, created, last used, status."""
    from compliance_api.auth import service as auth_service

    async def work() -> None:
        async with account_transaction(email) as (session, user):
            rows = await auth_service.list_for_user(session, user_id=user.id, environment=env)
        listed = [
            {
                "id": str(r.id),
                "name": r.name,
                "environment": str(r.environment),
                "last4": r.last4,
                "created_at": r.created_at.isoformat(),
                "last_used_at": r.last_used_at.isoformat() if r.last_used_at else None,
                "status": r.status,
            }
            for r in rows
        ]
        if as_json:
            print_json({"tokens": listed})
            return
        for t in listed:
            typer.echo(
                f"{t['id']}  {t['environment']:4}  …{t['last4']}  {t['status']:7}  "
                f"created {t['created_at']}  last used {t['last_used_at'] or 'never'}  {t['name']}"
            )

    run(work)


@app.command("revoke")
def revoke(token_id: str, as_json: JsonOption = False) -> None:
    """Revoke a token by id; every worker refuses it within 5 seconds."""
    try:
        parsed = uuid.UUID(token_id)
    except ValueError:
        typer.echo(f"error: {token_id!r} is not a token id (a UUID; see `tokens list`)", err=True)
        raise typer.Exit(1) from None

    from compliance_api.auth import service as auth_service

    async def work() -> None:
        async with transaction() as session:
            row = await auth_service.revoke(session, token_id=parsed)
        if as_json:
            print_json({"id": str(row.id), "status": row.status})
        else:
            typer.echo(f"revoked {row.id}", err=True)

    run(work)
