"""Who is calling: what authentication leaves in the request scope for endpoints. FastAPI-free, so the services
(and the CLI commands that use them) do not import the web framework; reading it from a request is
`auth/dependencies.py`."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Protocol

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
