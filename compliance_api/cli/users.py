from __future__ import annotations

from typing import Annotated

import typer

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, UserKind
from compliance_api.cli.common import JsonOption, print_json, run, transaction

app = typer.Typer(no_args_is_help=True, help="Manage users.")


@app.command("create")
def create(
    email: str,
    kind: Annotated[UserKind, typer.Option(help="freelancer or business.")] = UserKind.business,
    plan: Annotated[Plan, typer.Option(help="Decides the production rate-limit tier.")] = Plan.free,
    as_json: JsonOption = False,
) -> None:
    """Create a user and print its id (a freelancer's id is its freelancer_id)."""

    async def work() -> None:
        async with transaction() as session:
            user = await accounts_service.create(session, email=email, kind=kind, plan=plan)
        if as_json:
            print_json({"id": str(user.id), "email": user.email, "kind": user.kind, "plan": user.plan})
        else:
            typer.echo(str(user.id))

    run(work)
