"""`compliance-api dac7 seller|import|grant|revoke-grant|export`: DAC7 sellers, activities, read grants, DPI files."""

from __future__ import annotations

import datetime as dt
import sys
import uuid
from pathlib import Path
from typing import Annotated

import typer

from compliance_api.cli.common import EnvOption, JsonOption, print_json, read_input, run, transaction
from compliance_api.kit.environment_name import Environment

app = typer.Typer(no_args_is_help=True, help="DAC7: sellers' TINs, their activities, read grants and DPI reports.")


@app.command("seller")
def seller(
    email: str,
    tin: Annotated[str, typer.Option("--tin", help="The seller's tax identification number.")],
    state: Annotated[str, typer.Option("--member-state", help="EU member state that issued the TIN, e.g. NL.")],
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Record a freelancer's TIN and member state (replacing earlier ones); the TIN is checked for that state."""
    from compliance_api.accounts import service as accounts_service
    from compliance_api.dac7 import service
    from compliance_api.kit.clock import utcnow

    async def work() -> None:
        async with transaction() as session:
            user = await accounts_service.get_by_email_or_raise(session, email=email)
            row = await service.record_seller(session, user, env, tin=tin, member_state=state, now=utcnow())
        if as_json:
            print_json(
                {
                    "freelancer_id": str(row.user_id),
                    "tin": row.tin,
                    "member_state": row.member_state,
                    "rule": row.tin_rule,
                }
            )
        else:
            typer.echo(f"{user.email}: TIN {row.tin} ({row.member_state}, checked by {row.tin_rule})", err=True)

    run(work)


@app.command("import")
def import_activities(
    path: Annotated[
        Path,
        typer.Argument(
            help="CSV (activity_id,freelancer_id,activity_date,consideration_eur,fees_eur,taxes_eur[,activity_type]) "
            "or a JSON array of objects with those fields."
        ),
    ],
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Import relevant activities in one transaction; re-importing an activity id replaces that activity."""
    from compliance_api.dac7 import activity_file, service
    from compliance_api.dac7.service import SNAPSHOT_EVENT as DAC7_EVENT
    from compliance_api.kit.clock import utcnow

    async def work() -> service.ImportResult:
        content = read_input(path)
        now = utcnow()
        rows = activity_file.parse(content, json_format=path.suffix.lower() == ".json", today=now.date())
        async with transaction() as session:
            return await service.import_activities(session, env, rows, now=now)

    result = run(work)
    if as_json:
        print_json(
            {
                "rows": result.rows,
                "created": result.created,
                "updated": result.updated,
                "unchanged": result.unchanged,
                "events": result.events,
                "environment": env.value,
            }
        )
    else:
        typer.echo(
            f"{result.rows} rows into {env.label}: {result.created} new, {result.updated} changed, "
            f"{result.unchanged} unchanged; {result.events} {DAC7_EVENT} events (one per seller-year changed)",
            err=True,
        )


@app.command("grant")
def grant(
    seller_email: str,
    grantee_email: str,
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Let GRANTEE_EMAIL read SELLER_EMAIL's DAC7 snapshot in one environment (until revoked)."""
    from compliance_api.accounts import service as accounts_service
    from compliance_api.dac7 import service, views
    from compliance_api.kit.clock import utcnow

    async def work() -> None:
        async with transaction() as session:
            owner = await accounts_service.get_by_email_or_raise(session, email=seller_email)
            grantee = await accounts_service.get_by_email_or_raise(session, email=grantee_email)
            created = views.grant(await service.grant(session, owner, grantee, env, utcnow()))
        if as_json:
            print_json(created.model_dump(mode="json"))
        else:
            typer.echo(f"grant {created.id}: {grantee.email} may read {owner.email} in {env.label}", err=True)

    run(work)


@app.command("revoke-grant")
def revoke_grant(grant_id: uuid.UUID, as_json: JsonOption = False) -> None:
    """Revoke a grant by its id, in whichever environment it lives."""
    from compliance_api.dac7 import service, views
    from compliance_api.kit.clock import utcnow

    async def work() -> None:
        async with transaction() as session:
            revoked = await service.revoke_grant_by_id(session, grant_id, utcnow())
        if as_json:
            print_json(views.grant(revoked).model_dump(mode="json"))
        else:
            typer.echo(f"revoked grant {revoked.id}", err=True)

    run(work)


@app.command("export")
def export(
    year: Annotated[int, typer.Option("--year", help="The reportable period (calendar year).")],
    operator_name: Annotated[str, typer.Option("--operator-name", help="The reporting platform operator's name.")],
    operator_tin: Annotated[str, typer.Option("--operator-tin", help="The platform operator's TIN.")],
    operator_country: Annotated[
        str, typer.Option("--operator-country", help="Member state the operator reports to.")
    ] = "NL",
    out: Annotated[Path | None, typer.Option("--out", help="Write the XML here (default: stdout).")] = None,
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Write the OECD DPI XML of every reportable seller of YEAR; each seller's first export sets `reported_at`."""
    from compliance_api.dac7 import dpi
    from compliance_api.dac7.tin import member_state
    from compliance_api.kit.clock import utcnow

    if not 2023 <= year <= dt.date.today().year:
        typer.echo(f"error: --year must be from 2023 (DAC7's first period) to this year, not {year}", err=True)
        raise typer.Exit(1)
    if as_json and out is None:
        typer.echo("error: --json needs --out (without it the XML itself goes to stdout)", err=True)
        raise typer.Exit(1)

    async def work() -> dpi.Export:
        operator = dpi.Operator(
            name=operator_name.strip(), tin=operator_tin.strip(), country=member_state(operator_country)
        )
        if not operator.name or not operator.tin:
            raise ValueError("--operator-name and --operator-tin must not be empty")
        async with transaction() as session:
            made = await dpi.export_year(session, env, year, operator, now=utcnow())
            if out is not None:
                try:
                    out.write_bytes(made.xml)
                except OSError as exc:
                    raise ValueError(f"cannot write {out}: {exc.strerror}") from None
            return made

    made = run(work)
    if out is None:
        sys.stdout.buffer.write(made.xml)
    elif as_json:
        print_json({"path": str(out), "message_ref_id": made.message_ref_id, "sellers": made.sellers, "year": year})
    else:
        typer.echo(f"{made.sellers} reportable sellers of {year} written to {out}", err=True)
