"""`compliance-api`: the one command for operators (DESIGN §11)."""

from __future__ import annotations

import typer

from compliance_api.cli import demo, migrate, openapi, rates, serve, tokens, users

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Compliance API: serve, migrate and manage data.")
app.command("serve")(serve.serve)
app.command("migrate")(migrate.migrate)
app.command("demo")(demo.demo)
app.command("openapi")(openapi.openapi)
app.add_typer(users.app, name="users")
app.add_typer(tokens.app, name="tokens")
app.add_typer(rates.app, name="rates")


def main() -> None:
    app()
