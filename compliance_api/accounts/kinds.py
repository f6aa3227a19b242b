"""A user's kind and plan, on their own: `users create` takes them as options without the database layer that
`accounts.models` brings."""

from __future__ import annotations

from enum import StrEnum


class UserKind(StrEnum):
    freelancer = "freelancer"
    business = "business"


class Plan(StrEnum):
    """Commercial plan; it decides the production rate-limit tier. `internal` is for the operator's own probes."""

    free = "free"
    pro = "pro"
    team = "team"
    partner = "partner"
    internal = "internal"
