"""The demo users and tokens, and the documented sandbox fixtures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, UserKind
from compliance_api.auth import service as auth_service
from compliance_api.dac7.fixtures import create_dac7_fixtures
from compliance_api.kit.environment import Environment
from compliance_api.passport.fixtures import create_passport_fixtures
from compliance_api.rates.fixtures import create_demo_rates
from compliance_api.wtta.fixtures import create_sandbox_admissions

DEMO_BUSINESS_EMAIL = "demo-business@example.com"
DEMO_TOKEN_NAME = "demo"  # noqa: S105 (a label, not a secret)


@dataclass(frozen=True, slots=True)
class DemoResult:
    email: str
    live_token: str
    test_token: str
    fixtures: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"tokens": {"live": self.live_token, "test": self.test_token}, "fixtures": self.fixtures}


async def create_demo(session: AsyncSession, *, pepper: bytes) -> DemoResult:
    """Fresh demo tokens (earlier demo tokens are revoked: a token can be shown only once)."""
    user = await accounts_service.get_or_create(
        session, email=DEMO_BUSINESS_EMAIL, kind=UserKind.business, plan=Plan.pro
    )
    for old in await auth_service.list_for_user(session, user_id=user.id):
        if old.name == DEMO_TOKEN_NAME and old.revoked_at is None:
            await auth_service.revoke(session, token_id=old.id)
    _, live = await auth_service.create(
        session, user=user, environment=Environment.live, name=DEMO_TOKEN_NAME, pepper=pepper
    )
    _, test = await auth_service.create(
        session, user=user, environment=Environment.test, name=DEMO_TOKEN_NAME, pepper=pepper
    )
    fixtures = {
        "wtta": await create_sandbox_admissions(session),
        "rates": await create_demo_rates(session),
        **await create_passport_fixtures(session, pepper=pepper),
        **await create_dac7_fixtures(session, business=user),
    }
    return DemoResult(email=user.email, live_token=live, test_token=test, fixtures=fixtures)
