"""`compliance-api passport verify|set|share|revoke-share`: operators manage freelancers' passports."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from compliance_api.cli.common import EnvOption, JsonOption, account_transaction, print_json, run, transaction
from compliance_api.kit.environment_name import Environment
from compliance_api.passport.catalogue import packaged_catalogue

app = typer.Typer(no_args_is_help=True, help="Manage freelancers' compliance passports.")


def _date(value: str | None, option: str) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{option} must be a date as YYYY-MM-DD, not {value!r}") from None


@app.command("verify")
def verify(
    email: str,
    check: Annotated[str, typer.Argument(help=f"One of: {', '.join(packaged_catalogue().check_ids)}.")],
    evidence: Annotated[str, typer.Option("--evidence", help="Reference to the evidence checked.")] = "operator",
    verified_on: Annotated[str | None, typer.Option("--verified-on", help="YYYY-MM-DD; default today.")] = None,
    expires: Annotated[
        str | None, typer.Option("--expires", help="Last valid day, YYYY-MM-DD; default: the catalogue's validity.")
    ] = None,
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Record a verified check on a freelancer's passport (created if missing); re-verifying replaces it."""
    from compliance_api.kit.clock import utcnow
    from compliance_api.passport import service

    async def work() -> None:
        now = utcnow()
        async with account_transaction(email) as (session, user):
            row = await service.record_verification(
                session,
                user,
                env,
                packaged_catalogue(),
                check=check,
                verified_on=_date(verified_on, "--verified-on") or now.date(),
                expires_on=_date(expires, "--expires"),
                evidence_ref=evidence,
                now=now,
            )
        expiry = row.expires_on.isoformat() if row.expires_on else None
        if as_json:
            print_json({"check": row.check, "verified_on": row.verified_on.isoformat(), "expires_on": expiry})
        else:
            typer.echo(f"{row.check} verified on {row.verified_on}, valid through {expiry or 'no end date'}", err=True)

    run(work)


@app.command("set")
def set_passport(
    email: str,
    sector: Annotated[str, typer.Option("--sector", help="The freelancer's sector, e.g. ict.")],
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Set a freelancer's sector (the passport is created if missing)."""
    from compliance_api.kit.clock import utcnow
    from compliance_api.passport import service

    async def work() -> None:
        async with account_transaction(email) as (session, user):
            passport = await service.set_sector(session, user, env, sector, utcnow())
        if as_json:
            print_json({"freelancer_id": str(passport.user_id), "sector": passport.sector})
        else:
            typer.echo(f"sector of {user.email} set to {passport.sector}", err=True)

    run(work)


@app.command("share")
def share(
    email: str,
    ttl_days: Annotated[int, typer.Option("--ttl-days", help="Lifetime in days (1 to 365).")] = 30,
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Create a share-token for a freelancer's passport and print it alone, once."""
    from compliance_api.config import Settings
    from compliance_api.kit.clock import utcnow
    from compliance_api.passport import service, views

    settings = Settings()

    async def work() -> None:
        async with account_transaction(email, settings) as (session, user):
            now = utcnow()
            created = await service.create_share_for(
                session, user, env, ttl_days=ttl_days, pepper=settings.secret_key_bytes(), now=now
            )
        if as_json:
            print_json(views.share_created(created, now).model_dump(mode="json"))
        else:
            typer.echo(created.token)

    run(work)


@app.command("revoke-share")
def revoke_share(token: str, as_json: JsonOption = False) -> None:
    """Revoke a share-token (given as the token itself); it then answers 404 like an unknown one."""
    from compliance_api.config import Settings
    from compliance_api.kit.clock import utcnow
    from compliance_api.passport import service, views

    settings = Settings()

    async def work() -> None:
        async with transaction(settings) as session:
            now = utcnow()
            revoked = await service.revoke_share_by_token(
                session,
                token,
                pepper=settings.secret_key_bytes(),
                previous_pepper=settings.previous_secret_key_bytes(),
                now=now,
            )
        if as_json:
            print_json(views.share(revoked, now).model_dump(mode="json"))
        else:
            typer.echo(f"revoked share {revoked.id}", err=True)

    run(work)
