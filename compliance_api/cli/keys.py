"""`compliance-api keys rotate`: a new passport signing key per environment; old public keys stay published."""

from __future__ import annotations

import typer

from compliance_api.cli.common import EnvOption, JsonOption, print_json
from compliance_api.kit.environment_name import Environment

app = typer.Typer(no_args_is_help=True, help="Manage the passport signing keys.")


@app.command("rotate")
def rotate(env: EnvOption = Environment.live, as_json: JsonOption = False) -> None:
    """Add a key that signs from now on, with the PDF signing key and certificate of dossiers (naming
    COMPLIANCE_OPERATOR_NAME); earlier keys stay in /.well-known/jwks.json and earlier certificates in
    /.well-known/dossier-certificates.pem, so old signatures verify."""
    from compliance_api.config import Settings
    from compliance_api.passport.signing import SigningKeys, add_key

    settings = Settings()
    root = settings.resolved_signing_keys_dir
    kid = add_key(root, env, settings.operator_name)
    keys = SigningKeys(root, generate=False)
    published = [key.kid for key in keys.keys(env)]
    fingerprint = keys.pdf_signer(env).fingerprint
    if as_json:
        print_json(
            {"environment": env.value, "kid": kid, "published": published, "pdf_certificate_sha256": fingerprint}
        )
    else:
        typer.echo(f"{env.label} now signs with {kid}; {len(published)} public key(s) published", err=True)
        typer.echo(f"dossier PDFs are signed with the certificate of SHA-256 fingerprint {fingerprint}", err=True)
