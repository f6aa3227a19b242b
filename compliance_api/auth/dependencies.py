"""The caller as endpoints read it from the request (what `auth/gateway.py` left in the request scope), and the
peppers tokens are hashed under."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request

from compliance_api.auth.cache import TokenCache
from compliance_api.auth.caller import Caller
from compliance_api.kit.registry import Slot, collaborator

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection


def caller_of(request: Request) -> Caller:
    """The authenticated caller, read directly (the hottest routes skip FastAPI's dependency machinery)."""
    caller = request.scope["state"].get("caller")
    if not isinstance(caller, Caller):  # only reachable if a /v1 route is mounted outside the gateway
        raise RuntimeError("route reached without authentication")
    return caller


async def _caller(request: Request) -> Caller:
    return caller_of(request)


CurrentCaller = Annotated[Caller, Depends(_caller)]

PEPPER = Slot[bytes]("pepper")
PREVIOUS_PEPPER = Slot[bytes | None]("previous pepper")


def peppers_of(connection: HTTPConnection) -> tuple[bytes, bytes | None]:
    """The key tokens and share links are hashed under, and the retired one while `COMPLIANCE_SECRET_KEY` is being
    rotated (else None)."""
    return collaborator(connection, PEPPER), collaborator(connection, PREVIOUS_PEPPER)


TOKEN_CACHE = Slot[TokenCache]("token cache")


def token_cache_of(connection: HTTPConnection) -> TokenCache:
    """This worker's cache of resolved tokens (the gateway's)."""
    return collaborator(connection, TOKEN_CACHE)
