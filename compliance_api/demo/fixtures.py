"""The demo users and tokens, and the documented sandbox fixtures (and, asked for, synthetic production data).

The demo tokens survive re-running `demo`: a token is stored only as a keyed hash, so instead of storing it the demo
re-derives it, as HMAC(server secret, demo user id, environment, generation). The user id is random and stored once
per database, so each database has its own tokens; the server secret keeps them unguessable from the database alone.
The generation counts the user's revoked demo tokens: `--rotate` revokes the current ones, and the next derivation
gives new tokens (a demo token revoked by hand is likewise replaced, never revived).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.auth import service as auth_service
from compliance_api.auth import tokens
from compliance_api.auth.models import ApiToken
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
    rotated: bool = False
    production: dict[str, Any] = field(default_factory=dict)  # the synthetic production data, when asked for
    fixtures: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "tokens": {"live": self.live_token, "test": self.test_token},
            "rotated": self.rotated,
            "fixtures": self.fixtures,
            "production": self.production,
        }


async def create_demo(session: AsyncSession, *, pepper: bytes, rotate: bool = False) -> DemoResult:
    """The demo tokens (the same on every run unless `rotate`) and the sandbox fixtures."""
    user = await accounts_service.get_or_create(
        session, email=DEMO_BUSINESS_EMAIL, kind=UserKind.business, plan=Plan.pro
    )
    demo_tokens = await _demo_tokens(session, user)
    if rotate:
        for row in demo_tokens:
            if row.revoked_at is None:
                await auth_service.revoke(session, token_id=row.id)
        demo_tokens = await _demo_tokens(session, user)
    live = await _demo_token(session, user, Environment.live, demo_tokens, pepper)
    test = await _demo_token(session, user, Environment.test, demo_tokens, pepper)
    fixtures = {
        "wtta": await create_sandbox_admissions(session),
        "rates": await create_demo_rates(session),
        **await create_passport_fixtures(session, pepper=pepper),
        **await create_dac7_fixtures(session, business=user),
    }
    return DemoResult(user.email, live, test, rotate, fixtures=fixtures)


async def create_production_demo(session: AsyncSession) -> dict[str, Any]:
    """Synthetic production data: the fixture KvK numbers named `Demo … B.V.` with a synthetic source, and rate
    observations flagged synthetic (benchmarks built on them say so). In a transaction of its own: a register import
    per transaction (its staging table lives until the commit on PostgreSQL)."""
    return {
        "wtta": await create_sandbox_admissions(session, Environment.live),
        "rates": await create_demo_rates(session, Environment.live),
    }


async def _demo_tokens(session: AsyncSession, user: User) -> list[ApiToken]:
    return [row for row in await auth_service.list_for_user(session, user_id=user.id) if row.name == DEMO_TOKEN_NAME]


async def _demo_token(
    session: AsyncSession, user: User, environment: Environment, demo_tokens: list[ApiToken], pepper: bytes
) -> str:
    """The environment's demo token (see the module docstring), stored the first time it is derived."""
    generation = sum(1 for row in demo_tokens if row.environment is environment and row.revoked_at is not None)
    token = tokens.derive(environment, pepper, f"demo-token:{user.id}:{environment.value}:{generation}".encode())
    token_hash = tokens.hash_token(token, pepper)
    if not any(row.token_hash == token_hash for row in demo_tokens):
        await auth_service.create(
            session, user=user, environment=environment, name=DEMO_TOKEN_NAME, pepper=pepper, secret=token
        )
    return token
