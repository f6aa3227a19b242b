"""`compliance-api dac7 …`: the operator, sellers' identities, activities, read grants, DAC7 files, reseal."""

from __future__ import annotations

import datetime as dt
import sys
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from compliance_api.cli.common import (
    EnvOption,
    JsonOption,
    account_transaction,
    print_json,
    read_input,
    run,
    transaction,
)
from compliance_api.dac7.nexus import Nexus
from compliance_api.kit.environment_name import Environment

if TYPE_CHECKING:
    from compliance_api.dac7 import dpi, service
    from compliance_api.dac7.operator import OperatorIdentity

app = typer.Typer(
    no_args_is_help=True,
    help="DAC7: the operator, sellers' identities, their activities, read grants and DAC7 reports.",
)


@app.command("seller")
def seller(
    email: str,
    tin: Annotated[str, typer.Option("--tin", help="The seller's tax identification number.")],
    state: Annotated[str, typer.Option("--member-state", help="EU member state that issued the TIN, e.g. NL.")],
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Record a freelancer's TIN for a member state (replacing that state's TIN, keeping the rest of the identity)."""
    from compliance_api.config import Settings
    from compliance_api.dac7 import service
    from compliance_api.dac7.sealing import identity_box
    from compliance_api.kit.clock import utcnow

    async def work() -> None:
        async with account_transaction(email) as (session, user):
            row = await service.record_seller(
                session, user, env, tin=tin, member_state=state, box=identity_box(Settings()), now=utcnow()
            )
        if as_json:
            print_json({"freelancer_id": str(row.user_id), "member_state": row.member_state})
        else:
            typer.echo(f"{user.email}: TIN recorded ({state.upper()}), residence {row.member_state}", err=True)

    run(work)


@app.command("identities")
def import_identities(
    path: Annotated[
        Path,
        typer.Argument(
            help="A JSON array of objects: `email` or `freelancer_id`, then the identity's fields (as in "
            "PUT /v1/dac7/seller/{freelancer_id}/identity)."
        ),
    ],
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Set many sellers' identities in one transaction: every record is checked first; the first bad one aborts the
    import naming its record number and field, and nothing is written."""
    from compliance_api.config import Settings
    from compliance_api.dac7 import identity_file, service
    from compliance_api.dac7.sealing import identity_box
    from compliance_api.kit.clock import utcnow

    async def work() -> int:
        records = identity_file.parse(read_input(path))
        box, now = identity_box(Settings()), utcnow()
        async with transaction() as session:
            for number, record in enumerate(records, start=1):
                user = await identity_file.user_of(session, record, number)
                await service.set_identity(session, user, env, record.identity, box=box, now=now)
        return len(records)

    count = run(work)
    if as_json:
        print_json({"identities": count, "environment": env.value})
    else:
        typer.echo(f"{count} seller identities set in {env.label}", err=True)


@app.command("operator")
def operator(
    name: Annotated[str, typer.Option("--name", help="The reporting platform operator's legal name.")],
    tin: Annotated[str, typer.Option("--tin", help="Its tax identification number.")],
    tin_issued_by: Annotated[str, typer.Option("--tin-issued-by", help="Member state that issued the TIN.")],
    country: Annotated[str, typer.Option("--country", help="Member state the operator reports to.")],
    nexus: Annotated[Nexus, typer.Option("--nexus", help="RPONEX1 resident … RPONEX5 non-Union operator.")],
    city: Annotated[str, typer.Option("--city", help="Address: city.")],
    address_country: Annotated[str, typer.Option("--address-country", help="Address: ISO country code.")],
    street: Annotated[str | None, typer.Option("--street", help="Address: street.")] = None,
    building: Annotated[str | None, typer.Option("--building", help="Address: building number.")] = None,
    post_code: Annotated[str | None, typer.Option("--post-code", help="Address: post code.")] = None,
    vat: Annotated[str | None, typer.Option("--vat", help="Its VAT number, if any.")] = None,
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Set (or replace) the environment's reporting platform operator: what every DPI file's PlatformOperator says."""
    from compliance_api.dac7.identity import Dac7Address
    from compliance_api.dac7.operator import OperatorIdentity, set_operator
    from compliance_api.kit.clock import utcnow

    async def work() -> OperatorIdentity:
        identity = OperatorIdentity(
            name=name,
            tin=tin,
            tin_issued_by=tin_issued_by,
            country=country,
            nexus=nexus,
            vat=vat,
            address=Dac7Address(
                country=address_country, street=street, building=building, post_code=post_code, city=city
            ),
        )
        async with transaction() as session:
            return await set_operator(session, env, identity, utcnow())

    recorded = run(work)
    if as_json:
        print_json({**recorded.model_dump(mode="json"), "environment": env.value})
    else:
        typer.echo(f"{env.label} DAC7 operator: {recorded.name} ({recorded.tin}, {recorded.nexus})", err=True)


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

    async def work() -> service.Dac7ImportResult:
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
    out: Annotated[Path | None, typer.Option("--out", help="Write the XML here (default: stdout).")] = None,
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Write the DAC7 message for YEAR: new sellers, corrections and deletions since the last export (DPI401/402), or
    DPI403 when nobody was ever reportable; nothing when everything sent is still right. In production a seller
    lacking required data stops the export with a list of who lacks what, and no file is written."""

    if not 2023 <= year <= dt.date.today().year:
        typer.echo(f"error: --year must be from 2023 (DAC7's first period) to this year, not {year}", err=True)
        raise typer.Exit(1)
    if as_json and out is None:
        typer.echo("error: --json needs --out (without it the XML itself goes to stdout)", err=True)
        raise typer.Exit(1)
    with tempfile.TemporaryDirectory() as folder:  # stdout's file is written there first
        target = out or Path(folder) / "dac7.xml"
        made = _export(env, year, target)
        if out is None:
            if made.path is not None:
                sys.stdout.buffer.write(made.path.read_bytes())
            return
    _summary(made, year, out, as_json=as_json)


def _export(env: Environment, year: int, target: Path) -> dpi.Export:
    """Write the message beside `target`, record what was sent, then put the file in place (nothing on failure)."""
    from compliance_api.config import Settings
    from compliance_api.dac7 import dpi
    from compliance_api.dac7.sealing import identity_box
    from compliance_api.kit.clock import utcnow

    partial = target.with_name(target.name + ".partial")

    async def work() -> dpi.Export:
        try:
            async with transaction() as session:
                made = await dpi.export_year(
                    session, env, year, box=identity_box(Settings()), out=partial, now=utcnow()
                )
            if made.path is not None:
                made.path = partial.replace(target)
            return made
        except OSError as exc:
            raise ValueError(f"cannot write {target}: {exc.strerror}") from None
        finally:
            partial.unlink(missing_ok=True)

    made = run(work)
    for who, fields in made.lacking:
        typer.echo(f"left out (sandbox), lacking {', '.join(fields)}: {who}", err=True)
    return made


def _summary(made: dpi.Export, year: int, out: Path, *, as_json: bool) -> None:
    summary = {
        "path": None if made.path is None else str(out),
        "message_ref_id": made.message_ref_id,
        "message_type_indic": made.message_type_indic,
        "sellers": made.sellers,
        **{kind.value: count for kind, count in made.counts.items()},
        "left_out": [{"seller": who, "lacking": fields} for who, fields in made.lacking],
        "year": year,
    }
    if as_json:
        print_json(summary)
    elif made.path is None:
        typer.echo(f"nothing to send for {year}: every record sent is still right; no file written", err=True)
    else:
        counts = ", ".join(f"{count} {kind.value}" for kind, count in made.counts.items())
        typer.echo(f"{made.message_type_indic} for {year} written to {out}: {counts}", err=True)


@app.command("withdraw")
def withdraw(
    email: str,
    year: Annotated[int, typer.Option("--year", help="The reportable period the seller was reported for.")],
    env: EnvOption = Environment.live,
) -> None:
    """Withdraw a seller's record sent for YEAR: the next export sends its deletion (OECD3)."""
    from compliance_api.dac7 import service
    from compliance_api.kit.clock import utcnow

    async def work() -> None:
        async with account_transaction(email) as (session, user):
            await service.withdraw(session, user, env, year, utcnow())

    run(work)
    typer.echo(f"{email}: {year} withdrawn; the next `dac7 export --year {year}` sends its deletion", err=True)


@app.command("reseal")
def reseal(as_json: JsonOption = False) -> None:
    """Seal every seller identity under the current COMPLIANCE_SECRET_KEY (after a rotation, before removing
    COMPLIANCE_SECRET_KEY_PREVIOUS)."""
    from compliance_api.config import Settings
    from compliance_api.dac7 import service
    from compliance_api.dac7.sealing import identity_box

    async def work() -> int:
        async with transaction() as session:
            return await service.reseal_all(session, identity_box(Settings()))

    count = run(work)
    if as_json:
        print_json({"resealed": count})
    else:
        typer.echo(f"{count} DAC7 identities sealed under the current key", err=True)
