"""Rate-limit tiers (sandbox, free, pro, partner, internal) and how a caller lands in one."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from compliance_api.accounts.models import Plan
from compliance_api.kit.environment import Environment


@dataclass(frozen=True, slots=True)
class Tier:
    name: str
    per_minute: int
    burst: int

    @property
    def emission_interval_us(self) -> int:
        """Microseconds between two requests at the sustained rate (GCRA's T)."""
        return 60_000_000 // self.per_minute

    @property
    def policy_header(self) -> str:
        return f'"{self.name}";q={self.per_minute};w=60;burst={self.burst}'


SANDBOX = Tier("sandbox", 60, 120)
FREE = Tier("free", 60, 120)
PRO = Tier("pro", 600, 1200)
PARTNER = Tier("partner", 3000, 6000)
INTERNAL = Tier("internal", 6_000_000, 12_000_000)

TIERS = {tier.name: tier for tier in (SANDBOX, FREE, PRO, PARTNER, INTERNAL)}
_PRODUCTION_TIER_BY_PLAN = {
    Plan.free: FREE,
    Plan.pro: PRO,
    Plan.team: PRO,
    Plan.partner: PARTNER,
    Plan.internal: INTERNAL,
}


def tier_for(plan: Plan, environment: Environment) -> Tier:
    """Sandbox tokens get the sandbox tier (the operator's `internal` plan excepted); production follows the plan."""
    if plan is Plan.internal:
        return INTERNAL
    if environment is Environment.test:
        return SANDBOX
    return _PRODUCTION_TIER_BY_PLAN[plan]


def user_bucket(user_id: uuid.UUID, environment: Environment) -> str:
    """The limiter key of an account in one environment: every token of the account, and its assessments in the
    dashboard, draw on it."""
    return f"{user_id}:{environment.value}"
