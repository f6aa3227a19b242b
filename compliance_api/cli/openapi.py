from __future__ import annotations

import secrets
import sys
from importlib import resources
from typing import Annotated

import typer

from compliance_api import CONTRACT_VERSION
from compliance_api.app import create_app
from compliance_api.config import Settings
from compliance_api.openapi.contract import dumps


def openapi(
    write: Annotated[
        bool, typer.Option("--write", help=f"Freeze the generated contract as {CONTRACT_VERSION}.json.")
    ] = False,
) -> None:
    """Print the generated contract, or freeze it into the package's contracts folder."""
    throwaway_secret = secrets.token_urlsafe(32)  # the contract needs no secret; make none under var/
    text = dumps(create_app(Settings(access_log=False, secret_key=throwaway_secret)).openapi())
    if not write:
        sys.stdout.write(text)
        return
    target = resources.files("compliance_api.openapi").joinpath("contracts", f"{CONTRACT_VERSION}.json")
    with open(str(target), "w") as handle:
        handle.write(text)
    typer.echo(f"wrote {target}", err=True)
