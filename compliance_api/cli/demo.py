from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from compliance_api.cli.common import EnvOption, JsonOption, print_json, run, served_bases, transaction
from compliance_api.kit.addresses import DEFAULT_HOST, DEFAULT_PORT
from compliance_api.kit.environment_name import Environment

if TYPE_CHECKING:
    from compliance_api.demo.fixtures import DemoResult
    from compliance_api.kit.addresses import Bases


def data_paths() -> tuple[str, ...]:
    """The demo's data in a curl line each: a WTTA lookup of an admitted agency and a rate benchmark."""
    from compliance_api.wtta.fixtures import SANDBOX_ADMISSIONS
    from compliance_api.wtta.models import AdmissionStatus

    admitted = SANDBOX_ADMISSIONS[AdmissionStatus.admitted][0]
    return (f"/v1/wtta/lookup?kvk={admitted}", "/v1/rates/benchmark?sector=ict&region=NL")


def demo(
    env: EnvOption = Environment.test,
    rotate: Annotated[
        bool,
        typer.Option("--rotate", help="Revoke the current demo tokens and share-tokens and print new ones."),
    ] = False,
    host: Annotated[str, typer.Option(help="The address `serve` binds, for the printed URLs.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="The port `serve` binds, for the printed URLs.")] = DEFAULT_PORT,
    allow_production: Annotated[
        bool,
        typer.Option(
            "--allow-production",
            help="Create the demo users in a production deployment all the same: a business user on the pro plan "
            "with a working production token (`check` reports them as unsafe).",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Create the demo users, tokens and sandbox fixtures (`--env live`: synthetic production data too), and print
    them with curl lines that work as printed; running it again keeps the tokens. Refused in a production deployment
    unless `--allow-production`."""
    from compliance_api.cli.migrate import migrate_database
    from compliance_api.config import Settings
    from compliance_api.demo.fixtures import create_demo, create_production_demo

    settings = Settings()
    production = env is Environment.live
    if settings.is_production:
        _refuse_production(production=production, allowed=allow_production)

    async def work() -> DemoResult:
        if settings.is_sqlite:
            await migrate_database(settings)
        async with transaction(settings) as session:
            result = await create_demo(session, pepper=settings.secret_key_bytes(), rotate=rotate)
        if not production:
            return result
        async with transaction(settings) as session:
            return replace(result, production=await create_production_demo(session))

    result = run(work)
    if as_json:
        print_json(result.as_json())
        return
    typer.echo(_report(result, served_bases(settings, host, port)))


def _refuse_production(*, production: bool, allowed: bool) -> None:
    """In a production deployment: synthetic production data never; the demo users only with --allow-production."""
    from compliance_api.demo.fixtures import DEMO_BUSINESS_EMAIL

    if production:
        typer.echo(
            "error: demo --env live writes synthetic data into production; refused in a production deployment", err=True
        )
        raise typer.Exit(2)
    if not allowed:
        typer.echo(
            f"error: demo creates {DEMO_BUSINESS_EMAIL} on the pro plan with a working production (sk_live_) token and "
            "demo accounts with sandbox tokens; refused in a production deployment (COMPLIANCE_DEPLOYMENT=production). "
            "`--allow-production` creates them all the same, and `compliance-api check` then reports them as unsafe.",
            err=True,
        )
        raise typer.Exit(2)


def curl_lines(result: DemoResult, bases: Bases) -> list[str]:
    """The requests the demo data answers: health in both environments, WTTA and rates where there is data, and in
    the sandbox the demo freelancer's own passport and a verification of its share-token by the business."""
    lines = []
    if bases.production is not None:
        live_paths = ("/v1/health", *(data_paths() if result.production else ()))
        lines += [_curl(result.live_token, bases.production, path) for path in live_paths]
    if bases.sandbox is not None:
        lines += [_curl(result.test_token, bases.sandbox, path) for path in ("/v1/health", *data_paths())]
        lines += [
            _curl(result.freelancer_token, bases.sandbox, "/v1/passport"),
            _curl(result.test_token, bases.sandbox, f"/v1/passport/{result.share_token}/verify"),
        ]
    return lines


def _curl(token: str, base: str, path: str) -> str:
    return f'curl -H "Authorization: Bearer {token}" "{base}{path}"'


def _report(result: DemoResult, bases: Bases) -> str:
    from compliance_api.passport.fixtures import DEMO_FREELANCER_EMAIL

    if result.rotated:
        kept = (
            "The previous demo tokens and share-tokens are revoked; these replace them (`--rotate` again for new ones)."
        )
    else:
        kept = "These stay valid: `compliance-api demo` prints them again; `--rotate` revokes them for new ones."
    production = (
        "production holds synthetic demo data (WTTA numbers named `Demo … B.V.`, rates flagged synthetic)"
        if result.production
        else "production has no demo data (`compliance-api demo --env live` adds synthetic data)"
    )
    sandbox = bases.sandbox or "none (no sandbox port, no COMPLIANCE_SANDBOX_HOSTS)"
    where = f"Base URLs: production {bases.production}, sandbox {sandbox}."
    lines = "\n".join(f"  {line}" for line in curl_lines(result, bases))
    return f"""
Demo user {result.email}. {kept}
  production  {result.live_token}
  sandbox     {result.test_token}
  freelancer  {result.freelancer_token}  ({DEMO_FREELANCER_EMAIL}, sandbox)
  share       {result.share_token}  (the freelancer's passport share-token, for any sandbox account to verify)

{where} The sandbox holds the documented fixtures; {production}. Try them:
{lines}
"""
