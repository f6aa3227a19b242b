"""The account-form throttles on both limiter backends: per account and per address, independent of each other."""

from __future__ import annotations

from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import Plan
from compliance_api.dashboard import throttle
from compliance_api.kit.environment import Environment
from compliance_api.ratelimit.limiter import Limiter
from compliance_api.ratelimit.tiers import Tier, tier_for
from tests.dashboard.conftest import signed_up_user


def _sign_in(email: str, address: str) -> list[tuple[str, Tier]]:
    return [
        (throttle.account_key("sign_in", email), throttle.SIGN_IN_PER_ACCOUNT),
        (throttle.address_key("sign_in", address), throttle.SIGN_IN_PER_ADDRESS),
    ]


async def test_an_account_is_held_after_its_burst_from_any_address(limiter: Limiter) -> None:
    for attempt in range(throttle.SIGN_IN_PER_ACCOUNT.burst):
        assert await throttle.retry_after(limiter, _sign_in("a@example.com", f"10.0.0.{attempt}")) is None
    wait = await throttle.retry_after(limiter, _sign_in("A@example.com ", "10.0.1.1"))
    assert wait is not None
    assert 1 <= wait <= 60
    assert await throttle.retry_after(limiter, _sign_in("b@example.com", "10.0.1.1")) is None


async def test_an_address_is_held_after_its_burst_whatever_the_account(limiter: Limiter) -> None:
    for attempt in range(throttle.SIGN_IN_PER_ADDRESS.burst):
        assert await throttle.retry_after(limiter, _sign_in(f"u{attempt}@example.com", "192.0.2.7")) is None
    assert await throttle.retry_after(limiter, _sign_in("fresh@example.com", "192.0.2.7")) is not None
    assert await throttle.retry_after(limiter, _sign_in("fresh@example.com", "192.0.2.8")) is None


def test_account_keys_name_no_address() -> None:
    key = throttle.account_key("sign_in", "Someone@Example.com")
    assert "someone" not in key.lower()
    assert key == throttle.account_key("sign_in", " someone@example.com")


def test_account_keys_are_the_same_for_every_spelling_the_account_lookup_accepts() -> None:
    keys = {
        throttle.account_key("sign_in", email)
        for email in (
            "v@example.com",
            "V@Example.COM ",
            "v@ｅｘａｍｐｌｅ.ｃｏｍ",
            "v@example。com",
            "v@ＥＸＡＭＰＬＥ。ｃｏｍ",
        )
    }
    assert len(keys) == 1
    assert throttle.account_key("sign_in", "w@example.com") not in keys


def test_addresses_that_do_not_validate_still_share_a_key_across_case_and_width() -> None:
    assert throttle.account_key("reset", "not an address") == throttle.account_key("reset", "ＮＯＴ ａｎ address")


async def test_a_signed_in_users_pages_are_limited_as_the_plans_api_tokens_are(
    browser: AsyncClient, other_browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await signed_up_user(browser, sessionmaker, "flood@example.com")
    await signed_up_user(other_browser, sessionmaker, "calm@example.com")
    tier = tier_for(Plan.free, Environment.live)
    answers = [(await browser.get("/freelancer/api-tokens")).status_code for _ in range(tier.burst + 1)]
    assert answers[0] == 200
    assert answers[-1] == 429
    held = await browser.get("/freelancer/api-tokens")
    assert held.status_code == 429
    assert int(held.headers["retry-after"]) >= 1
    assert (await other_browser.get("/freelancer/api-tokens")).status_code == 200
