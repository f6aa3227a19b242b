"""The demo users and tokens, and the documented sandbox fixtures (and, asked for, synthetic production data).

The demo tokens survive re-running `demo`: a token is stored only as a keyed hash, so instead of storing it the demo
re-derives it, as HMAC(server secret, demo user id, environment, generation). The user id is random and stored once
per database, so each database has its own tokens; the server secret keeps them unguessable from the database alone.
The current generation is the first whose token is not revoked: `--rotate` revokes the current tokens, and the next
derivation gives new ones (a demo token revoked by hand is likewise replaced, never revived). The business user has
one in each environment, the demo freelancer one in the sandbox; its passport's share-tokens are kept the same way
(passport/fixtures.py).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.auth import service as auth_service
from compliance_api.auth import tokens
from compliance_api.dac7.fixtures import UNAUTHORISED_SELLER_EMAIL, create_dac7_fixtures
from compliance_api.dac7.sealing import IdentityBox
from compliance_api.kit.environment import Environment
from compliance_api.passport.fixtures import DEMO_FREELANCER_EMAIL, create_passport_fixtures, demo_freelancer
from compliance_api.rates.fixtures import create_demo_rates
from compliance_api.wtta.fixtures import create_sandbox_admissions

DEMO_BUSINESS_EMAIL = "demo-business@example.com"
DEMO_TOKEN_NAME = "demo"  # noqa: S105 (a label, not a secret)
DEMO_EMAILS = (DEMO_BUSINESS_EMAIL, DEMO_FREELANCER_EMAIL, UNAUTHORISED_SELLER_EMAIL)


@dataclass(frozen=True, slots=True)
class DemoResult:
    email: str
    live_token: str
    test_token: str
    freelancer_token: str
    share_token: str  # the demo freelancer's valid share-token
    rotated: bool = False
    production: dict[str, Any] = field(default_factory=dict)  # the synthetic production data, when asked for
    fixtures: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "tokens": {"live": self.live_token, "test": self.test_token, "freelancer": self.freelancer_token},
            "rotated": self.rotated,
            "fixtures": self.fixtures,
            "production": self.production,
        }


async def create_demo(session: AsyncSession, *, pepper: bytes, rotate: bool = False) -> DemoResult:
    """The demo tokens and share-tokens (the same on every run unless `rotate`) and the sandbox fixtures."""
    user = await accounts_service.get_or_create(
        session, email=DEMO_BUSINESS_EMAIL, kind=UserKind.business, plan=Plan.pro
    )
    freelancer = await demo_freelancer(session)
    live = await _demo_token(session, user, Environment.live, pepper, rotate=rotate)
    test = await _demo_token(session, user, Environment.test, pepper, rotate=rotate)
    freelancer_token = await _demo_token(session, freelancer, Environment.test, pepper, rotate=rotate)
    passport = await create_passport_fixtures(session, freelancer, pepper=pepper, rotate=rotate)
    fixtures = {
        "wtta": await create_sandbox_admissions(session),
        "rates": await create_demo_rates(session),
        **passport,
        "passport": {**passport["passport"], "token": freelancer_token},
        **await create_dac7_fixtures(session, business=user, box=IdentityBox(pepper)),
    }
    share = passport["passport_share_tokens"]["valid"]
    return DemoResult(user.email, live, test, freelancer_token, share, rotate, fixtures=fixtures)


async def demo_accounts(session: AsyncSession) -> list[User]:
    """The users `demo` makes, those of them that exist."""
    found = [await accounts_service.get_by_email(session, email=email) for email in DEMO_EMAILS]
    return [user for user in found if user is not None]


async def create_production_demo(session: AsyncSession) -> dict[str, Any]:
    """Synthetic production data: the fixture KvK numbers named `Demo … B.V.` with a synthetic source, and rate
    observations flagged synthetic (benchmarks built on them say so). In a transaction of its own: a register import
    per transaction (its staging table lives until the commit on PostgreSQL)."""
    return {
        "wtta": await create_sandbox_admissions(session, Environment.live),
        "rates": await create_demo_rates(session, Environment.live),
    }


async def _demo_token(
    session: AsyncSession, user: User, environment: Environment, pepper: bytes, *, rotate: bool
) -> str:
    """The user's demo token in `environment` (see the module docstring), stored the first time it is derived;
    storing a new one revokes the user's other demo tokens there."""
    rows = {
        row.token_hash: row
        for row in await auth_service.list_for_user(session, user_id=user.id, environment=environment)
        if row.name == DEMO_TOKEN_NAME
    }
    for generation in itertools.count():
        token = tokens.derive(environment, pepper, f"demo-token:{user.id}:{environment.value}:{generation}".encode())
        current = rows.get(tokens.hash_token(token, pepper))
        if current is None or current.revoked_at is None:
            if not rotate or current is None:
                break
            rotate = False  # the current token: revoked, the next generation replaces it
            await auth_service.revoke(session, token_id=current.id)
    if current is None:
        for row in rows.values():
            await auth_service.revoke(session, token_id=row.id)
        await auth_service.create(
            session, user=user, environment=environment, name=DEMO_TOKEN_NAME, pepper=pepper, secret=token
        )
    return token
