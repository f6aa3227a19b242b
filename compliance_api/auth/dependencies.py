"""The caller as endpoints read it from the request: what `auth/gateway.py` left in the request scope."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from compliance_api.auth.caller import Caller


def caller_of(request: Request) -> Caller:
    """The authenticated caller, read directly (the hottest routes skip FastAPI's dependency machinery)."""
    caller = request.scope["state"].get("caller")
    if not isinstance(caller, Caller):  # only reachable if a /v1 route is mounted outside the gateway
        raise RuntimeError("route reached without authentication")
    return caller


async def _caller(request: Request) -> Caller:
    return caller_of(request)


CurrentCaller = Annotated[Caller, Depends(_caller)]
