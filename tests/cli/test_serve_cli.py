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

from tests.conftest import SECRET

LISTENING = re.compile(r"^compliance-api listening on (http://127\.0\.0\.1:(\d+)): ")


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


def raw_problem(port: int, request: bytes) -> dict[str, Any]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        received = b""
        while data := conn.recv(65536):
            received += data
    problem: dict[str, Any] = json.loads(received.split(b"\r\n\r\n", 1)[1])
    return problem


def test_serve_prints_one_line_once_it_answers_with_its_links_and_environments(
    database_url: str, var_dir: Path
) -> None:
    with serving(database_url, var_dir, REDIS_URL="") as (line, rest):
        url, _ = listening(line)
        assert httpx.get(f"{url}/livez").status_code == 200, "printed only once it answers"
        assert httpx.get(f"{url}/docs").status_code == 200
        for link in (f"docs {url}/docs", f"guide {url}/guide/", f"dashboard {url}/freelancer/"):
            assert link in line
        assert "sandbox for sandbox.localhost (COMPLIANCE_SANDBOX_HOSTS), production for any other host" in line
    assert not [later for later in rest if later.startswith("compliance-api listening")], "printed once"


def test_several_workers_print_the_line_once(database_url: str, var_dir: Path, redis_url: str) -> None:
    with serving(database_url, var_dir, "--workers", "2", REDIS_URL=redis_url) as (line, rest):
        url, _ = listening(line)
        assert httpx.get(f"{url}/livez").status_code == 200
    assert not [later for later in rest if later.startswith("compliance-api listening")]


def test_error_types_follow_the_address_served_unless_a_public_base_url_is_set(
    database_url: str, var_dir: Path
) -> None:
    with serving(database_url, var_dir, REDIS_URL="") as (line, _):
        url, port = listening(line)
        assert httpx.get(f"{url}/v1/health").json()["type"] == f"{url}/errors/missing_token"
        assert raw_problem(port, b"NOT HTTP AT ALL\r\n\r\n")["type"] == f"{url}/errors/malformed_request"
    public = {"COMPLIANCE_PUBLIC_BASE_URL": "https://api.example.com/"}
    with serving(database_url, var_dir, REDIS_URL="", **public) as (line, _):
        url, port = listening(line)
        assert httpx.get(f"{url}/v1/health").json()["type"] == "https://api.example.com/errors/missing_token"
        assert (
            raw_problem(port, b"NOT HTTP AT ALL\r\n\r\n")["type"] == "https://api.example.com/errors/malformed_request"
        )


def test_make_run_checks_prints_and_serves_at_host_and_port() -> None:
    """`make run PORT=… HOST=…`: the port check, the demo's links and `serve` all use them."""
    root = Path(__file__).parents[2]
    plan = subprocess.run(
        ["make", "-n", "run", "PORT=8010", "HOST=0.0.0.0"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    assert "socket.create_server(('0.0.0.0', 8010)" in plan
    assert "compliance-api demo --host '0.0.0.0' --port '8010'" in plan
    assert "compliance-api serve --host '0.0.0.0' --port '8010'" in plan
