from __future__ import annotations

import datetime as dt
import sys
from typing import Annotated

import typer

from compliance_api.accounts.kinds import Plan, UserKind
from compliance_api.cli.common import JsonOption, account_transaction, print_json, run, transaction

app = typer.Typer(no_args_is_help=True, help="Manage users.")


@app.command("create")
def create(
    email: str,
    kind: Annotated[UserKind, typer.Option(help="freelancer or business.")] = UserKind.business,
    plan: Annotated[Plan, typer.Option(help="Decides the production rate-limit tier.")] = Plan.free,
    as_json: JsonOption = False,
) -> None:
    """Create a user and print its id (a freelancer's id is its freelancer_id)."""
    from compliance_api.accounts import service as accounts_service

    async def work() -> None:
        async with transaction() as session:
            user = await accounts_service.create(session, email=email, kind=kind, plan=plan)
        if as_json:
            print_json({"id": str(user.id), "email": user.email, "kind": user.kind, "plan": user.plan})
        else:
            typer.echo(str(user.id))

    run(work)


@app.command("set-password")
def set_password(
    email: str,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from the first line of standard input.")
    ] = False,
) -> None:
    """Set a user's dashboard password (asked twice, hidden); signs the user out of every browser."""
    from compliance_api.config import Settings
    from compliance_api.dashboard import passwords
    from compliance_api.dashboard import service as dashboard_service
    from compliance_api.kit.clock import utcnow

    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = typer.prompt("New password", hide_input=True, confirmation_prompt=True)
    settings = Settings()

    async def work() -> None:
        async with account_transaction(email, settings) as (session, user):
            await dashboard_service.replace_password(
                session,
                user=user,
                password=password,
                hasher=passwords.hasher_for(settings.password_hash_profile),
                now=utcnow(),
            )
        typer.echo(f"password set for {user.email}", err=True)

    run(work)


@app.command("reset-link")
def reset_link(email: str) -> None:
    """Print a single-use link for the user to choose a dashboard password (valid COMPLIANCE_PASSWORD_RESET_MINUTES)."""
    from compliance_api.accounts.errors import UserNotFound
    from compliance_api.config import Settings
    from compliance_api.dashboard import service as dashboard_service
    from compliance_api.kit.addresses import public_base_url
    from compliance_api.kit.clock import utcnow

    settings = Settings()

    async def work() -> None:
        async with transaction(settings) as session:
            found = await dashboard_service.request_reset(
                session,
                email=email,
                pepper=settings.secret_key_bytes(),
                lifetime=dt.timedelta(minutes=settings.password_reset_minutes),
                now=utcnow(),
            )
        if found is None:
            raise UserNotFound(email)
        typer.echo(dashboard_service.reset_link(public_base_url(settings.public_base_url), found[1]))

    run(work)
