"""`compliance-api demo`: tokens that survive a second run, curl lines that answer as printed, production data."""

from __future__ import annotations

import asyncio
import re
import shlex
from urllib.parse import urlsplit

import pytest
from fastapi import FastAPI
from httpx import ASGITransport, AsyncClient, Response

from tests.cli.conftest import invoke


async def invoke_async(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """The CLI runs its own event loop, so from an async test it runs in a thread."""
    return await asyncio.to_thread(invoke, env, *args)


def printed_tokens(out: str) -> tuple[str, str]:
    live = re.search(r"production\s+(sk_live_\w+)", out)
    test = re.search(r"sandbox\s+(sk_test_\w+)", out)
    assert live is not None
    assert test is not None
    return live.group(1), test.group(1)


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
    for curl in curl_lines(first):
        assert (await replay(app, curl)).status_code == 200, curl


async def test_rotate_revokes_the_printed_tokens_and_says_so(cli_env: dict[str, str], app: FastAPI) -> None:
    code, first, _ = await invoke_async(cli_env, "demo")
    assert code == 0
    code, rotated, _ = await invoke_async(cli_env, "demo", "--rotate")
    assert code == 0

    assert "previous demo tokens are revoked" in rotated
    old_live, old_test = printed_tokens(first)
    new_live, new_test = printed_tokens(rotated)
    assert {new_live, new_test}.isdisjoint({old_live, old_test})
    answers = {curl[-1]: await replay(app, curl) for curl in curl_lines(first)}
    assert {response.json()["code"] for response in answers.values()} == {"revoked_token"}
    for curl in curl_lines(rotated):
        assert (await replay(app, curl)).status_code == 200, curl
    code, again, _ = await invoke_async(cli_env, "demo")
    assert printed_tokens(again) == (new_live, new_test), "rotated tokens are kept by the next plain run"


@pytest.mark.parametrize(
    ("args", "lines"),
    [(("demo",), 4), (("demo", "--env", "live"), 6)],
    ids=["sandbox", "with-production"],
)
async def test_every_printed_curl_line_answers_200_as_printed(
    cli_env: dict[str, str], app: FastAPI, args: tuple[str, ...], lines: int
) -> None:
    code, out, _ = await invoke_async(cli_env, *args)
    assert code == 0
    printed = curl_lines(out)
    assert len(printed) == lines
    paths = {urlsplit(curl[-1]).path for curl in printed}
    assert paths == {"/v1/health", "/v1/wtta/lookup", "/v1/rates/benchmark"}
    for curl in printed:
        assert (await replay(app, curl)).status_code == 200, curl


async def test_production_demo_data_is_labelled_synthetic(cli_env: dict[str, str], app: FastAPI) -> None:
    code, out, _ = await invoke_async(cli_env, "demo", "--env", "live")
    assert code == 0
    assert "synthetic" in out
    production = [curl for curl in curl_lines(out) if not any(part.startswith("Host: ") for part in curl)]
    answers = {urlsplit(curl[-1]).path: (await replay(app, curl)).json() for curl in production}

    assert answers["/v1/wtta/lookup"]["legal_name"].startswith("Demo ")
    assert "synthetic demo data" in answers["/v1/wtta/lookup"]["source"]
    assert answers["/v1/rates/benchmark"]["synthetic"] is True


async def test_without_env_live_production_has_no_demo_data(cli_env: dict[str, str], app: FastAPI) -> None:
    code, out, _ = await invoke_async(cli_env, "demo")
    assert code == 0
    live, _ = printed_tokens(out)
    lookup = ["curl", "-H", f"Authorization: Bearer {live}", "http://127.0.0.1:8000/v1/wtta/lookup?kvk=99000003"]
    assert (await replay(app, lookup)).status_code == 404
    assert "--env live" in out


def test_production_deployments_refuse_synthetic_production_data(cli_env: dict[str, str]) -> None:
    code, out, err = invoke({**cli_env, "COMPLIANCE_DEPLOYMENT": "production"}, "demo", "--env", "live")
    assert (code, out) == (2, "")
    assert "refused in a production deployment" in err


def test_printed_links_follow_host_and_port_unless_a_public_base_url_is_set(cli_env: dict[str, str]) -> None:
    code, out, _ = invoke(cli_env, "demo", "--host", "0.0.0.0", "--port", "8010")
    assert code == 0
    assert {urlsplit(curl[-1]).netloc for curl in curl_lines(out)} == {"127.0.0.1:8010"}

    code, out, _ = invoke({**cli_env, "COMPLIANCE_PUBLIC_BASE_URL": "https://api.example.com/"}, "demo")
    assert code == 0
    assert {urlsplit(curl[-1]).netloc for curl in curl_lines(out)} == {"api.example.com"}
