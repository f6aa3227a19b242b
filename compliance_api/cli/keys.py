"""`compliance-api keys rotate`: a new passport signing key per environment; old public keys stay published."""

from __future__ import annotations

import typer

from compliance_api.cli.common import EnvOption, JsonOption, print_json
from compliance_api.kit.environment_name import Environment

app = typer.Typer(no_args_is_help=True, help="Manage the passport signing keys.")


@app.command("rotate")
def rotate(env: EnvOption = Environment.live, as_json: JsonOption = False) -> None:
    """Add a key that signs from now on; earlier keys stay in /.well-known/jwks.json so old signatures verify."""
    from compliance_api.config import Settings
    from compliance_api.passport.signing import SigningKeys, add_key

    root = Settings().resolved_signing_keys_dir
    kid = add_key(root, env)
    published = [key.kid for key in SigningKeys(root, generate=False).keys(env)]
    if as_json:
        print_json({"environment": env.value, "kid": kid, "published": published})
    else:
        typer.echo(f"{env.label} now signs with {kid}; {len(published)} public key(s) published", err=True)
