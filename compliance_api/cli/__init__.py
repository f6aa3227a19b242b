"""`compliance-api`: the one command for operators."""

from __future__ import annotations

import typer

from compliance_api.cli import (
    check,
    classifications,
    classify,
    dac7,
    demo,
    idempotency,
    keys,
    migrate,
    openapi,
    passport,
    rates,
    rulesets,
    sandbox,
    serve,
    tokens,
    users,
    webhooks,
    wtta,
)

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Compliance API: serve, migrate and manage data.")
app.command("serve")(serve.serve)
app.command("migrate")(migrate.migrate)
app.command("check")(check.check)
app.command("demo")(demo.demo)
app.command("purge-sandbox")(sandbox.purge_sandbox_command)
app.add_typer(openapi.app, name="openapi")
app.command("worker")(webhooks.worker)
app.add_typer(users.app, name="users")
app.add_typer(tokens.app, name="tokens")
app.add_typer(classify.app, name="classify")
app.add_typer(classifications.app, name="classifications")
app.add_typer(rulesets.app, name="rulesets")
app.add_typer(wtta.app, name="wtta")
app.add_typer(passport.app, name="passport")
app.add_typer(keys.app, name="keys")
app.add_typer(idempotency.app, name="idempotency")
app.add_typer(rates.app, name="rates")
app.add_typer(dac7.app, name="dac7")
app.add_typer(webhooks.app, name="webhooks")


def main() -> None:
    app()
