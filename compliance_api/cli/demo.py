from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from compliance_api.cli.common import EnvOption, JsonOption, print_json, run, transaction
from compliance_api.cli.migrate import migrate_database
from compliance_api.config import Settings
from compliance_api.demo.fixtures import DemoResult, create_demo, create_production_demo
from compliance_api.kit.addresses import DEFAULT_HOST, DEFAULT_PORT, public_base_url
from compliance_api.kit.environment import Environment
from compliance_api.wtta.fixtures import SANDBOX_ADMISSIONS
from compliance_api.wtta.models import AdmissionStatus

ADMITTED_KVK = SANDBOX_ADMISSIONS[AdmissionStatus.admitted][0]
DATA_PATHS = (f"/v1/wtta/lookup?kvk={ADMITTED_KVK}", "/v1/rates/benchmark?sector=ict&region=NL")


def demo(
    env: EnvOption = Environment.test,
    rotate: Annotated[
        bool, typer.Option("--rotate", help="Revoke the current demo tokens and print new ones.")
    ] = False,
    host: Annotated[str, typer.Option(help="The address `serve` binds, for the printed URLs.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="The port `serve` binds, for the printed URLs.")] = DEFAULT_PORT,
    as_json: JsonOption = False,
) -> None:
    """Create the demo user, tokens and sandbox fixtures (`--env live`: synthetic production data too), and print
    them with curl lines that work as printed; running it again keeps the tokens."""
    settings = Settings()
    production = env is Environment.live
    if production and settings.is_production:
        typer.echo(
            "error: demo --env live writes synthetic data into production; refused in a production deployment", err=True
        )
        raise typer.Exit(2)

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
    base = public_base_url(settings.public_base_url, host, port)
    typer.echo(_report(result, base, settings.sandbox_hosts[0] if settings.sandbox_hosts else None))


def curl_lines(result: DemoResult, base: str, sandbox_host: str | None) -> list[str]:
    """The requests the demo data answers: health in both environments, WTTA and rates where there is data."""
    live_paths = ("/v1/health", *(DATA_PATHS if result.production else ()))
    lines = [f'curl -H "Authorization: Bearer {result.live_token}" "{base}{path}"' for path in live_paths]
    if sandbox_host is not None:
        lines += [
            f'curl -H "Host: {sandbox_host}" -H "Authorization: Bearer {result.test_token}" "{base}{path}"'
            for path in ("/v1/health", *DATA_PATHS)
        ]
    return lines


def _report(result: DemoResult, base: str, sandbox_host: str | None) -> str:
    if result.rotated:
        kept = "The previous demo tokens are revoked; these replace them (`--rotate` again for new ones)."
    else:
        kept = "These stay valid: `compliance-api demo` prints them again; `--rotate` revokes them for new ones."
    production = (
        "production holds synthetic demo data (WTTA numbers named `Demo … B.V.`, rates flagged synthetic)"
        if result.production
        else "production has no demo data (`compliance-api demo --env live` adds synthetic data)"
    )
    lines = "\n".join(f"  {line}" for line in curl_lines(result, base, sandbox_host))
    return f"""
Demo user {result.email}. {kept}
  production  {result.live_token}
  sandbox     {result.test_token}

The sandbox holds the documented fixtures; {production}. Try them:
{lines}
"""
