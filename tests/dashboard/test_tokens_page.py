"""`/freelancer/api-tokens`: the same tokens as the CLI, shown once, listed by last four, revoked with confirmation."""

from __future__ import annotations

import re
import uuid

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts import service as accounts_service
from compliance_api.auth import service as auth_service
from compliance_api.auth import tokens
from compliance_api.kit.environment import Environment
from tests.dashboard.conftest import PASSWORD, csrf_of, post_form, sign_up, signed_up_user
from tests.factories import bearer, create_token

SECRET_IN_PAGE = re.compile(r'value="(sk_(?:live|test)_[0-9A-Za-z]{38})"')


async def _create(browser: AsyncClient, name: str, environment: str) -> str:
    created = await post_form(browser, "/freelancer/api-tokens", {"name": name, "environment": environment})
    assert created.status_code == 200
    assert "This is the only time it is shown" in created.text
    assert created.headers["cache-control"] == "no-store"
    found = SECRET_IN_PAGE.search(created.text)
    assert found is not None
    return found.group(1)


async def _revoke_first_active(browser: AsyncClient) -> None:
    listed = await browser.get("/freelancer/api-tokens")
    revoke_path = re.search(r'href="(/freelancer/api-tokens/[0-9a-f-]+/revoke)"', listed.text)
    assert revoke_path is not None
    confirm = await browser.get(revoke_path.group(1))
    assert "This cannot be undone" in confirm.text
    done = await browser.post(revoke_path.group(1), data={"csrf_token": csrf_of(confirm)})
    assert done.status_code == 303
    assert done.headers["location"] == "/freelancer/api-tokens?done=token_revoked"


async def test_a_sandbox_token_from_the_page_works_until_revoked_there(
    browser: AsyncClient, client: AsyncClient, sandbox_client: AsyncClient
) -> None:
    await sign_up(browser, "dev@example.com", kind="business")
    secret = await _create(browser, "ci", "test")
    parsed = tokens.parse(secret)
    assert parsed is not None
    assert parsed.environment is Environment.test
    assert (await sandbox_client.get("/v1/health", headers=bearer(secret))).status_code == 200
    assert (await client.get("/v1/health", headers=bearer(secret))).json()["code"] == "wrong_environment"
    listed = await browser.get("/freelancer/api-tokens")
    assert secret not in listed.text
    row = re.search(r"<tr data-token-id=.*?</tr>", listed.text, re.DOTALL)
    assert row is not None
    assert f"sk_test_…{secret[-4:]}" in row.group(0)
    assert "<td>ci</td>" in row.group(0)
    assert "never" not in row.group(0)  # last used: just now
    await _revoke_first_active(browser)
    after = await sandbox_client.get("/v1/health", headers=bearer(secret))
    assert after.status_code == 401
    assert after.json()["code"] == "revoked_token"
    assert "revoked" in (await browser.get("/freelancer/api-tokens")).text


async def test_the_page_and_the_cli_share_one_token_store(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    await sign_up(browser, "both@example.com", kind="business")
    secret = await _create(browser, "from the page", "live")
    async with sessionmaker() as session:
        user_tokens = await auth_service.list_for_user(session, user_id=await _user_id(session, "both@example.com"))
        record = await auth_service.resolve(session, token_hash=tokens.hash_token(secret, pepper))
    assert [(t.name, t.environment, t.last4) for t in user_tokens] == [("from the page", Environment.live, secret[-4:])]
    assert record is not None
    assert not record.is_revoked


async def _user_id(session: AsyncSession, email: str) -> uuid.UUID:
    return (await accounts_service.get_by_email_or_raise(session, email=email)).id


async def test_nobody_revokes_or_sees_another_users_token(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, client: AsyncClient
) -> None:
    row, secret = await create_token(sessionmaker, pepper, name="victim token")
    await sign_up(browser, "attacker@example.com")
    listed = await browser.get("/freelancer/api-tokens")
    assert "victim token" not in listed.text
    confirm = await browser.get(f"/freelancer/api-tokens/{row.id}/revoke")
    assert confirm.status_code == 404
    attempt = await browser.post(f"/freelancer/api-tokens/{row.id}/revoke", data={"csrf_token": csrf_of(listed)})
    assert attempt.status_code == 404
    assert (await client.get("/v1/health", headers=bearer(secret))).status_code == 200


async def test_token_pages_need_a_signed_in_user(browser: AsyncClient) -> None:
    for path in ("/freelancer/api-tokens", f"/freelancer/api-tokens/{uuid.uuid4()}/revoke", "/freelancer/passport"):
        response = await browser.get(path)
        assert response.status_code == 303
        assert response.headers["location"].startswith("/freelancer/sign-in?next=")


async def test_a_bad_token_form_is_explained(browser: AsyncClient) -> None:
    await sign_up(browser, "forms@example.com")
    no_name = await post_form(browser, "/freelancer/api-tokens", {"name": " ", "environment": "test"})
    assert no_name.status_code == 400
    assert "Give the token a name" in no_name.text
    bad_env = await post_form(browser, "/freelancer/api-tokens", {"name": "x", "environment": "staging"})
    assert bad_env.status_code == 400
    assert "Choose production or sandbox" in bad_env.text
    assert (await browser.get("/freelancer/api-tokens/not-a-uuid/revoke")).status_code == 404


async def test_a_token_name_with_a_nul_character_is_refused_naming_the_field(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    user = await signed_up_user(browser, sessionmaker, "nul@example.com")
    refused = await post_form(browser, "/freelancer/api-tokens", {"name": "mine\u0000", "environment": "test"})
    assert refused.status_code == 400
    assert "The field “name” contains a NUL character" in refused.text
    assert 'name="name"' in refused.text, "the token form is shown again"
    async with sessionmaker() as session:
        assert await auth_service.list_for_user(session, user_id=user.id) == []


async def test_pages_send_a_strict_csp_and_load_nothing_from_other_hosts(
    browser: AsyncClient, client: AsyncClient
) -> None:
    await sign_up(browser, "csp@example.com")
    for path in ("/freelancer/sign-in", "/freelancer/sign-up", "/freelancer/api-tokens", "/freelancer/passport"):
        page = await browser.get(path)
        assert page.status_code == 200
        policy = page.headers["content-security-policy"]
        assert "default-src 'self'" in policy
        assert "script-src 'self';" in policy
        assert "frame-ancestors 'none'" in policy
        assert "unsafe-inline" not in policy
        assert page.headers["x-content-type-options"] == "nosniff"  # the global headers, once
        assert len(page.headers.get_list("x-frame-options")) == 1
        assert not re.search(r'(src|href)="(https?:)?//', page.text)
        assert "<script>" not in page.text
        assert " style=" not in page.text
    assert (await browser.get("/freelancer/static/copy.js")).status_code == 200
    assert "content-security-policy" not in (await client.get("/livez")).headers


async def test_the_dashboard_is_not_in_the_contract(client: AsyncClient) -> None:
    contract = (await client.get("/openapi.json")).json()
    assert not [path for path in contract["paths"] if path.startswith("/freelancer")]


async def test_the_log_records_who_did_what_but_no_secret(
    browser: AsyncClient, capfd: pytest.CaptureFixture[str]
) -> None:
    await sign_up(browser, "audit@example.com")
    secret = await _create(browser, "audited", "live")
    await _revoke_first_active(browser)
    logged = capfd.readouterr().out
    for event in ("dashboard_signed_up", "dashboard_token_created", "dashboard_token_revoked"):
        assert f'"event":"{event}"' in logged
    assert f'"token_last4":"{secret[-4:]}"' in logged
    assert secret not in logged
    assert PASSWORD not in logged
