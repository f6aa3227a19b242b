"""`compliance-api serve` as a real process: one line once it listens, links at the address it really serves."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Deployment, Settings
from compliance_api.kit.environment import Environment
from tests.conftest import SECRET, database_of_the_module
from tests.factories import bearer, create_token, create_user

LISTENING = re.compile(r"^compliance-api listening on (http://127\.0\.0\.1:(\d+)): ")
SANDBOX_AT = re.compile(r"the sandbox at (http://127\.0\.0\.1:\d+) \(COMPLIANCE_SANDBOX_PORT\)")


@contextmanager
def serving(database_url: str, var_dir: Path, *args: str, **settings: str) -> Iterator[tuple[str, list[str]]]:
    """`compliance-api serve --port 0 ARGS`; yields (its line saying it listens, a list that gets every later line
    once it stopped). Its log lines (JSON) share stdout: the ones before are skipped."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": str(var_dir),
        "COMPLIANCE_ACCESS_LOG": "false",
        "COMPLIANCE_PUBLIC_BASE_URL": "",
        **settings,
    }
    command = [sys.executable, "-m", "compliance_api", "serve", "--port", "0", *args]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    rest: list[str] = []
    try:
        line = process.stdout.readline()  # blocks until `serve` prints (an empty line once it exited)
        while line.startswith("{"):
            line = process.stdout.readline()
        yield line, rest
    finally:
        process.terminate()
        rest.extend(process.stdout.read().splitlines())
        process.wait(timeout=30)


def listening(line: str) -> tuple[str, int]:
    """(URL, port) of the line `serve` prints once it listens."""
    found = LISTENING.match(line)
    assert found is not None, line
    return found.group(1), int(found.group(2))


def sandbox_at(line: str) -> str:
    """The sandbox's base URL in the line `serve` prints once it listens."""
    found = SANDBOX_AT.search(line)
    assert found is not None, line
    return found.group(1)


def raw_problem(port: int, request: bytes) -> dict[str, Any]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        received = b""
        while data := conn.recv(65536):
            received += data
    problem: dict[str, Any] = json.loads(received.split(b"\r\n\r\n", 1)[1])
    return problem


def printed_once(rest: list[str]) -> None:
    """Nothing `serve` printed after its line, until it stopped, says again that it listens."""
    assert not [later for later in rest if later.startswith("compliance-api listening")], "printed once"


database_url = pytest.fixture(scope="module", name="database_url")(database_of_the_module)


@pytest.fixture(scope="module")
def default_line(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The line of one `serve` with the default settings (no Redis), asked by the module's tests in turn: each start
    takes seconds. Once it stopped, after the module's last test, it must have printed that line once."""
    with serving(database_url, tmp_path_factory.mktemp("var"), REDIS_URL="") as (line, rest):
        yield line
    printed_once(rest)


@pytest.fixture(scope="module")
def configured_line(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The line of one `serve` with no sandbox port (COMPLIANCE_SANDBOX_PORT=0) and a public base URL, asked by the
    tests of each setting."""
    settings = {"COMPLIANCE_SANDBOX_PORT": "0", "COMPLIANCE_PUBLIC_BASE_URL": "https://api.example.com/"}
    with serving(database_url, tmp_path_factory.mktemp("var"), REDIS_URL="", **settings) as (line, _):
        yield line


def test_serve_prints_one_line_once_it_answers_with_its_links_and_environments(default_line: str) -> None:
    """(That it prints the line once is checked when `default_line`'s server stops.)"""
    line = default_line
    url, _ = listening(line)
    assert httpx.get(f"{url}/livez").status_code == 200, "printed only once it answers"
    assert httpx.get(f"{url}/docs").status_code == 200
    for link in (f"docs {url}/docs", f"guide {url}/guide/", f"dashboard {url}/freelancer/"):
        assert link in line
    assert "and for Host sandbox.localhost (COMPLIANCE_SANDBOX_HOSTS), production for any other host" in line, line


@pytest.fixture
async def live_and_test(
    engine: object, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> tuple[str, str]:
    """A production and a sandbox token of one user, committed for the server to see."""
    user = await create_user(sessionmaker)
    _, live = await create_token(sessionmaker, pepper, user=user)
    _, test = await create_token(sessionmaker, pepper, user=user, environment=Environment.test)
    return live, test


def test_serve_answers_the_sandbox_on_its_second_port_by_base_url_alone(
    default_line: str, live_and_test: tuple[str, str]
) -> None:
    """A client that cannot choose the Host header (Node's fetch) reaches the sandbox by its base URL: every request
    on the sandbox port is the sandbox, whatever its Host; production stays on the main port."""
    live, test = live_and_test
    url, _ = listening(default_line)
    sandbox = sandbox_at(default_line)
    assert httpx.get(f"{sandbox}/v1/health", headers=bearer(test)).status_code == 200
    refused = httpx.get(f"{sandbox}/v1/health", headers={**bearer(live), "Host": "api.example.com"})
    assert (refused.status_code, refused.json()["code"]) == (401, "wrong_environment")
    assert refused.json()["type"] == f"{sandbox}/errors/wrong_environment"
    assert httpx.get(f"{url}/v1/health", headers=bearer(live)).status_code == 200
    assert httpx.get(f"{url}/v1/health", headers=bearer(test)).json()["code"] == "wrong_environment"
    lookup = httpx.get(f"{sandbox}/v1/wtta/lookup?kvk=99000003", headers=bearer(test))
    assert lookup.json()["code"] == "not_in_cache", "the sandbox's own data (no demo ran)"
    servers = [server["url"] for server in httpx.get(f"{url}/openapi.json").json()["servers"]]
    assert servers == [url, sandbox]
    assert [server["url"] for server in httpx.get(f"{sandbox}/openapi.json").json()["servers"]] == [sandbox]


def test_a_sandbox_port_in_use_stops_serve_naming_the_setting(database_url: str, var_dir: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        busy = str(taken.getsockname()[1])
        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "COMPLIANCE_SECRET_KEY": SECRET,
            "COMPLIANCE_VAR_DIR": str(var_dir),
            "COMPLIANCE_SANDBOX_PORT": busy,
        }
        command = [sys.executable, "-m", "compliance_api", "serve", "--port", "0"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert f"error: cannot listen on 127.0.0.1:{busy} (COMPLIANCE_SANDBOX_PORT)" in done.stderr


def test_production_has_no_sandbox_port_unless_set(configured_line: str) -> None:
    production = Settings(deployment=Deployment.production)
    assert production.sandbox_port_beside(8000) is None
    assert production.model_copy(update={"sandbox_port": 9001}).sandbox_port_beside(8000) == 9001
    embedded = Settings()
    assert (embedded.sandbox_port_beside(8000), embedded.sandbox_port_beside(0)) == (8001, 0)
    assert embedded.model_copy(update={"sandbox_port": 0}).sandbox_port_beside(8000) is None
    listening(configured_line)
    assert SANDBOX_AT.search(configured_line) is None
    assert "the sandbox for Host sandbox.localhost (COMPLIANCE_SANDBOX_HOSTS)" in configured_line


def test_several_workers_print_the_line_once(database_url: str, var_dir: Path, redis_url: str) -> None:
    with serving(database_url, var_dir, "--workers", "2", REDIS_URL=redis_url) as (line, rest):
        url, _ = listening(line)
        assert httpx.get(f"{url}/livez").status_code == 200
        assert httpx.get(f"{sandbox_at(line)}/livez").status_code == 200, "every worker listens on both ports"
    printed_once(rest)


def test_error_types_follow_the_address_served_unless_a_public_base_url_is_set(
    default_line: str, configured_line: str
) -> None:
    url, port = listening(default_line)
    assert httpx.get(f"{url}/v1/health").json()["type"] == f"{url}/errors/missing_token"
    assert raw_problem(port, b"NOT HTTP AT ALL\r\n\r\n")["type"] == f"{url}/errors/malformed_request"
    url, port = listening(configured_line)
    assert httpx.get(f"{url}/v1/health").json()["type"] == "https://api.example.com/errors/missing_token"
    assert raw_problem(port, b"NOT HTTP AT ALL\r\n\r\n")["type"] == "https://api.example.com/errors/malformed_request"


def test_make_run_checks_prints_and_serves_at_host_and_port() -> None:
    """`make run PORT=… HOST=…`: the port check, the demo's links and `serve` all use them."""
    root = Path(__file__).parents[2]
    plan = subprocess.run(
        ["make", "-n", "run", "PORT=8010", "HOST=0.0.0.0"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    assert "socket.create_server(('0.0.0.0', 8010)" in plan
    assert "socket.create_server(('0.0.0.0', 8011)" in plan, "the sandbox port is checked too"
    assert "COMPLIANCE_SANDBOX_PORT='8011' .venv/bin/compliance-api demo --host '0.0.0.0' --port '8010'" in plan
    assert "COMPLIANCE_SANDBOX_PORT='8011' .venv/bin/compliance-api serve --host '0.0.0.0' --port '8010'" in plan
    elsewhere = ["make", "-n", "run", "PORT=8010", "SANDBOX_PORT=9010"]
    plan = subprocess.run(elsewhere, cwd=root, capture_output=True, text=True, check=True).stdout
    assert "socket.create_server(('127.0.0.1', 9010)" in plan
    assert "COMPLIANCE_SANDBOX_PORT='9010' .venv/bin/compliance-api serve" in plan
