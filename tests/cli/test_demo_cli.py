"""`compliance-api demo`: tokens that survive a second run, curl lines that answer as printed, production data."""

from __future__ import annotations

import asyncio
import re
import shlex
from urllib.parse import urlsplit

import pytest
from fastapi import FastAPI
from httpx import ASGITransport, AsyncClient, Response

from compliance_api.config import Settings
from tests.cli.conftest import invoke

PRINTED_TOKENS = (
    r"production\s+(sk_live_\w+)",
    r"sandbox\s+(sk_test_\w+)",
    r"freelancer\s+(sk_test_\w+)",
    r"share\s+(pst_\w+)",
)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The app the printed lines are replayed against, as `serve` (port 8000) runs it: the sandbox on port 8001."""
    return settings.model_copy(update={"sandbox_port": 8001})


async def invoke_async(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """The CLI runs its own event loop, so from an async test it runs in a thread."""
    return await asyncio.to_thread(invoke, env, *args)


def printed_tokens(out: str) -> tuple[str, ...]:
    """(production, sandbox, freelancer, share-token) as `demo` prints them."""
    found = [re.search(pattern, out) for pattern in PRINTED_TOKENS]
    assert all(found), out
    return tuple(match.group(1) for match in found if match)


def curl_lines(out: str) -> list[list[str]]:
    return [shlex.split(line) for line in out.splitlines() if line.strip().startswith("curl ")]


async def replay(app: FastAPI, curl: list[str]) -> Response:
    """A printed `curl -H … URL` line, sent to the application as curl would send it."""
    assert curl[0] == "curl"
    headers = dict(value.split(": ", 1) for flag, value in zip(curl[1:-1:2], curl[2:-1:2], strict=True) if flag == "-H")
    url = urlsplit(curl[-1])
    headers.setdefault("Host", url.netloc)
    async with AsyncClient(transport=ASGITransport(app=app), base_url=f"{url.scheme}://{url.netloc}") as http:
        return await http.get(curl[-1], headers=headers)


async def test_a_second_demo_prints_the_same_tokens_and_they_keep_working(
    cli_env: dict[str, str], app: FastAPI
) -> None:
    code, first, _ = await invoke_async(cli_env, "demo")
    assert code == 0
    code, second, _ = await invoke_async(cli_env, "demo")
    assert code == 0

    assert printed_tokens(second) == printed_tokens(first)
    assert "prints them again" in second
    assert len(curl_lines(first)) == 6
    for curl in curl_lines(first):
        assert (await replay(app, curl)).status_code == 200, curl


async def test_rotate_revokes_the_printed_tokens_and_says_so(cli_env: dict[str, str], app: FastAPI) -> None:
    code, first, _ = await invoke_async(cli_env, "demo")
    assert code == 0
    code, rotated, _ = await invoke_async(cli_env, "demo", "--rotate")
    assert code == 0

    assert "previous demo tokens and share-tokens are revoked" in rotated
    old, new = printed_tokens(first), printed_tokens(rotated)
    assert set(new).isdisjoint(old)
    answers = {curl[-1]: await replay(app, curl) for curl in curl_lines(first)}
    assert {response.json()["code"] for response in answers.values()} == {"revoked_token"}
    new_business = ["-H", f"Authorization: Bearer {new[1]}"]
    old_share = ["curl", *new_business, f"http://127.0.0.1:8001/v1/passport/{old[3]}/verify"]
    assert (await replay(app, old_share)).json()["code"] == "share_not_found"
    for curl in curl_lines(rotated):
        assert (await replay(app, curl)).status_code == 200, curl
    code, again, _ = await invoke_async(cli_env, "demo")
    assert printed_tokens(again) == new, "rotated tokens are kept by the next plain run"


async def test_a_share_token_revoked_by_hand_is_replaced_never_revived(cli_env: dict[str, str], app: FastAPI) -> None:
    code, first, _ = await invoke_async(cli_env, "demo")
    assert code == 0
    share = printed_tokens(first)[3]
    assert (await invoke_async(cli_env, "passport", "revoke-share", share))[0] == 0

    code, second, _ = await invoke_async(cli_env, "demo")
    assert code == 0
    assert printed_tokens(second)[3] != share
    assert printed_tokens(second)[:3] == printed_tokens(first)[:3], "the API tokens stay"
    for curl in curl_lines(second):
        assert (await replay(app, curl)).status_code == 200, curl
    code, third, _ = await invoke_async(cli_env, "demo")
    assert printed_tokens(third) == printed_tokens(second)


@pytest.mark.parametrize(
    ("args", "lines"),
    [(("demo",), 6), (("demo", "--env", "live"), 8)],
    ids=["sandbox", "with-production"],
)
async def test_every_printed_curl_line_answers_200_as_printed(
    cli_env: dict[str, str], app: FastAPI, args: tuple[str, ...], lines: int
) -> None:
    code, out, _ = await invoke_async(cli_env, *args)
    assert code == 0
    printed = curl_lines(out)
    assert len(printed) == lines
    _, _, freelancer, share = printed_tokens(out)
    paths = {urlsplit(curl[-1]).path for curl in printed}
    assert paths == {
        "/v1/health",
        "/v1/wtta/lookup",
        "/v1/rates/benchmark",
        "/v1/passport",
        f"/v1/passport/{share}/verify",
    }
    assert f"Authorization: Bearer {freelancer}" in next(c for c in printed if c[-1].endswith("/v1/passport"))
    assert not [part for curl in printed for part in curl if part.startswith("Host:")], "no Host header needed"
    for curl in printed:
        answer = await replay(app, curl)
        assert answer.status_code == 200, curl
        assert answer.headers["x-request-id"]
    sandbox = [curl for curl in printed if urlsplit(curl[-1]).port == 8001]
    assert len(sandbox) == 5, "the sandbox lines use the sandbox port"


async def test_production_demo_data_is_labelled_synthetic(cli_env: dict[str, str], app: FastAPI) -> None:
    code, out, _ = await invoke_async(cli_env, "demo", "--env", "live")
    assert code == 0
    assert "synthetic" in out
    production = [curl for curl in curl_lines(out) if urlsplit(curl[-1]).port == 8000]
    answers = {urlsplit(curl[-1]).path: (await replay(app, curl)).json() for curl in production}

    assert answers["/v1/wtta/lookup"]["legal_name"].startswith("Demo ")
    assert "synthetic demo data" in answers["/v1/wtta/lookup"]["source"]
    assert answers["/v1/rates/benchmark"]["synthetic"] is True


async def test_without_env_live_production_has_no_demo_data(cli_env: dict[str, str], app: FastAPI) -> None:
    code, out, _ = await invoke_async(cli_env, "demo")
    assert code == 0
    live = printed_tokens(out)[0]
    lookup = ["curl", "-H", f"Authorization: Bearer {live}", "http://127.0.0.1:8000/v1/wtta/lookup?kvk=99000003"]
    assert (await replay(app, lookup)).status_code == 404
    assert "--env live" in out


def test_production_deployments_refuse_synthetic_production_data(cli_env: dict[str, str]) -> None:
    code, out, err = invoke({**cli_env, "COMPLIANCE_DEPLOYMENT": "production"}, "demo", "--env", "live")
    assert (code, out) == (2, "")
    assert "refused in a production deployment" in err
    code, out, err = invoke(
        {**cli_env, "COMPLIANCE_DEPLOYMENT": "production"}, "demo", "--env", "live", "--allow-production"
    )
    assert (code, out) == (2, ""), "--allow-production allows the demo users, never synthetic production data"


def test_production_deployments_refuse_the_demo_unless_allowed_loudly(cli_env: dict[str, str]) -> None:
    production = {**cli_env, "COMPLIANCE_DEPLOYMENT": "production"}
    code, out, err = invoke(production, "demo")
    assert (code, out) == (2, "")
    assert "refused in a production deployment" in err
    assert "--allow-production" in err
    code, _, err = invoke(cli_env, "tokens", "list", "demo-business@example.com")
    assert code == 1
    assert "no user" in err, "nothing was created"

    code, out, _ = invoke(production, "demo", "--allow-production")
    assert code == 0
    assert printed_tokens(out)[0].startswith("sk_live_")


def test_printed_links_follow_host_and_port_unless_a_public_base_url_is_set(cli_env: dict[str, str]) -> None:
    code, out, _ = invoke(cli_env, "demo", "--host", "0.0.0.0", "--port", "8010")
    assert code == 0
    assert {urlsplit(curl[-1]).netloc for curl in curl_lines(out)} == {"127.0.0.1:8010", "127.0.0.1:8011"}
    assert "Base URLs: production http://127.0.0.1:8010, sandbox http://127.0.0.1:8011." in out

    code, out, _ = invoke({**cli_env, "COMPLIANCE_SANDBOX_PORT": "9100"}, "demo", "--port", "8010")
    assert code == 0
    assert {urlsplit(curl[-1]).netloc for curl in curl_lines(out)} == {"127.0.0.1:8010", "127.0.0.1:9100"}

    code, out, _ = invoke({**cli_env, "COMPLIANCE_SANDBOX_PORT": "0"}, "demo", "--port", "8010")
    assert code == 0
    assert {urlsplit(curl[-1]).netloc for curl in curl_lines(out)} == {"127.0.0.1:8010", "sandbox.localhost:8010"}

    code, out, _ = invoke({**cli_env, "COMPLIANCE_PUBLIC_BASE_URL": "https://api.example.com/"}, "demo")
    assert code == 0
    assert {urlsplit(curl[-1]).netloc for curl in curl_lines(out)} == {"api.example.com", "sandbox.localhost"}
