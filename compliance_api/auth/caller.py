"""Who is calling: what authentication leaves in the request scope for endpoints."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Protocol

from fastapi import Depends, Request

from compliance_api.accounts.models import Plan, UserKind
from compliance_api.kit.environment import Environment
from compliance_api.ratelimit.tiers import Tier


class Actor(Protocol):
    """Who acts on their own records: an API caller (`Caller`), or a person signed in to the dashboard."""

    @property
    def user_id(self) -> uuid.UUID: ...

    @property
    def environment(self) -> Environment: ...

    @property
    def kind(self) -> UserKind: ...


@dataclass(frozen=True, slots=True)
class Caller:
    user_id: uuid.UUID
    token_id: uuid.UUID
    environment: Environment
    plan: Plan
    kind: UserKind
    tier: Tier
    token_last4: str


def caller_of(request: Request) -> Caller:
    """The authenticated caller, read directly (the hottest routes skip FastAPI's dependency machinery)."""
    caller = request.scope["state"].get("caller")
    if not isinstance(caller, Caller):  # only reachable if a /v1 route is mounted outside the gateway
        raise RuntimeError("route reached without authentication")
    return caller


async def _caller(request: Request) -> Caller:
    return caller_of(request)


CurrentCaller = Annotated[Caller, Depends(_caller)]
