from __future__ import annotations

import typer

from compliance_api.cli.common import JsonOption, print_json, run, transaction
from compliance_api.cli.migrate import migrate_database
from compliance_api.config import Settings
from compliance_api.demo.fixtures import DemoResult, create_demo


def demo(as_json: JsonOption = False) -> None:
    """(Re)create the demo users, tokens and sandbox fixtures, and print them."""
    settings = Settings()

    async def work() -> DemoResult:
        if settings.is_sqlite:
            await migrate_database(settings)
        async with transaction(settings) as session:
            return await create_demo(session, pepper=settings.secret_key_bytes())

    result = run(work)
    if as_json:
        print_json(result.as_json())
        return
    base = settings.public_base_url.rstrip("/")
    typer.echo(
        f"""
Demo user {result.email}; tokens are shown once (run `compliance-api demo` again for new ones):
  production  {result.live_token}
  sandbox     {result.test_token}

Try them:
  curl -H "Authorization: Bearer {result.live_token}" {base}/v1/health
  curl -H "Host: sandbox.localhost" -H "Authorization: Bearer {result.test_token}" {base}/v1/health
"""
    )
