"""`compliance-api serve` as a real process: slow clients are cut off, no server banner, HSTS behind a trusted proxy."""

from __future__ import annotations

import json
import os
import select
import socket
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.conftest import commits, database_of_the_module
from tests.factories import create_token
from tests.servers import servers

READ_TIMEOUT = 0.5
LINGER_SECONDS = 0.5


database_url = pytest.fixture(scope="module", name="database_url")(database_of_the_module)


@pytest.fixture(scope="module")
def ports(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    """`compliance-api serve` twice, started side by side: with the module's short limits, and with the defaults but
    trusting forwarded headers from another address only."""
    limits = {
        "COMPLIANCE_REQUEST_READ_TIMEOUT_SECONDS": str(READ_TIMEOUT),
        "COMPLIANCE_MAX_HEADER_BYTES": "4096",
        "COMPLIANCE_REFUSAL_LINGER_SECONDS": str(LINGER_SECONDS),
    }
    untrusted = {"COMPLIANCE_FORWARDED_ALLOW_IPS": "10.9.8.7"}
    with servers(
        [limits, untrusted],
        database_url=database_url,
        redis_url=os.environ.get("REDIS_URL", ""),
        var_dir=str(tmp_path_factory.mktemp("var")),
        via_cli=True,
    ) as (limited, other):
        yield _port(limited), _port(other)


def _port(base_url: str) -> int:
    port = urlsplit(base_url).port
    assert port is not None
    return port


@pytest.fixture(scope="module")
def port(ports: tuple[int, int]) -> int:
    """The server with the module's short limits."""
    return ports[0]


def _exchange(port: int, *chunks: bytes) -> tuple[bytes, float]:
    """Send `chunks` (stopping early once the server answers) and stop; read until the server closes. Returns
    (everything read, seconds until closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        started = time.monotonic()
        for chunk in chunks:
            if select.select([conn], [], [], 0.02 if len(chunks) > 2 else 0)[0]:
                break  # answered: sending on into a closed connection would reset it
            conn.sendall(chunk)
        received = b""
        while data := conn.recv(65536):
            received += data
        return received, time.monotonic() - started


def test_a_client_that_sends_nothing_is_disconnected(port: int) -> None:
    received, elapsed = _exchange(port)
    assert received.startswith(b"HTTP/1.1 408 ")
    assert READ_TIMEOUT * 0.8 <= elapsed < 5


def test_headers_that_never_end_get_408(port: int) -> None:
    received, elapsed = _exchange(port, b"GET /livez HTTP/1.1\r\nHost: api.test\r\nX-Slow: ")
    status, _, problem = _problem(received)
    assert status.startswith(b"HTTP/1.1 408 ")
    assert problem["code"] == "request_timeout"
    assert elapsed >= READ_TIMEOUT * 0.8


@commits
async def test_a_body_that_never_ends_gets_408(
    port: int, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, token = await create_token(sessionmaker, pepper)
    head = (
        b"POST /v1/classify/zelfstandigenwet HTTP/1.1\r\nHost: api.test\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + token.encode() + b"\r\nContent-Length: 200\r\n\r\n"
    )
    received, elapsed = _exchange(port, head, b'{"engagement": ')
    assert received.startswith(b"HTTP/1.1 408 ")
    assert elapsed >= READ_TIMEOUT * 0.8


def test_oversized_headers_get_431(port: int) -> None:
    received, _ = _exchange(port, b"GET /livez HTTP/1.1\r\nHost: api.test\r\nX-Pad: " + b"a" * 8192)
    assert received.startswith(b"HTTP/1.1 431 ")


def _problem(received: bytes) -> tuple[bytes, dict[bytes, bytes], dict[str, Any]]:
    """(status line, lower-cased headers, JSON body) of a problem+json answer read from a socket."""
    head, _, body = received.partition(b"\r\n\r\n")
    status, *lines = head.split(b"\r\n")
    headers = dict(line.lower().split(b": ", 1) for line in lines)
    assert headers[b"content-type"] == b"application/problem+json", received
    assert headers[b"x-content-type-options"] == b"nosniff"
    assert headers[b"x-frame-options"] == b"deny"
    return status, headers, json.loads(body)


def test_a_huge_header_in_one_write_gets_431(port: int) -> None:
    request = b"GET /livez HTTP/1.1\r\nHost: api.test\r\nX-Pad: " + b"a" * 100_000 + b"\r\n\r\n"
    received, _ = _exchange(port, request)
    status, _, problem = _problem(received)
    assert status.startswith(b"HTTP/1.1 431 ")
    assert problem["code"] == "headers_too_large"


def test_a_refused_client_that_sends_on_gets_the_end_of_the_answer_not_a_reset(port: int) -> None:
    """A refusal drains what the client still sends instead of resetting the connection, which could discard the
    answer before the client reads it."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(b"GET /livez HTTP/1.1\r\nHost: api.test\r\nX-Pad: " + b"a" * 8192)
        received = conn.recv(65536)
        while b"}" not in received:
            received += conn.recv(65536)
        conn.sendall(b"a" * 65536)  # after a plain close the kernel would answer this with a reset
        while data := conn.recv(65536):
            received += data
    assert received.startswith(b"HTTP/1.1 431 ")


def _seconds_until_cut_off(conn: socket.socket, longest: float) -> float | None:
    """Send to `conn` until the server ends the connection; seconds that took, or None if it went on for `longest`."""
    started = time.monotonic()
    while time.monotonic() - started < longest:
        try:
            conn.sendall(b"a" * 4096)
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - started
        select.select([], [], [], 0.01)
    return None


def test_a_refused_client_that_never_stops_sending_is_cut_off(port: int) -> None:
    """The draining after a refusal is bounded: a client that sends forever is disconnected."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(b"GET /livez HTTP/1.1\r\nHost: api.test\r\nX-Pad: " + b"a" * 8192)
        assert _seconds_until_cut_off(conn, 10 * LINGER_SECONDS) is not None


def test_a_huge_header_in_many_small_writes_gets_431(port: int) -> None:
    pad = b"a" * 100_000
    chunks = [pad[i : i + 1000] for i in range(0, len(pad), 1000)]
    received, _ = _exchange(port, b"GET /livez HTTP/1.1\r\nHost: api.test\r\nX-Pad: ", *chunks, b"\r\n\r\n")
    status, _, problem = _problem(received)
    assert status.startswith(b"HTTP/1.1 431 ")
    assert problem["code"] == "headers_too_large"


def test_many_headers_under_the_limit_each_but_over_it_together_get_431(port: int) -> None:
    headers = b"".join(b"X-Pad-%d: %s\r\n" % (n, b"a" * 200) for n in range(40))
    received, _ = _exchange(port, b"GET /livez HTTP/1.1\r\nHost: api.test\r\n" + headers + b"\r\n")
    assert received.startswith(b"HTTP/1.1 431 ")


def test_a_request_the_parser_refuses_gets_a_problem_with_the_security_headers(port: int) -> None:
    received, _ = _exchange(port, b"NOT HTTP AT ALL\r\n\r\n")
    status, _, problem = _problem(received)
    assert status.startswith(b"HTTP/1.1 400 ")
    assert problem["code"] == "malformed_request"


@pytest.mark.parametrize(
    "hosts",
    [
        [b"api.test", b"sandbox.localhost"],
        [b"sandbox.localhost:abc"],
        [b"sandbox.localhost:65536"],
        [b"sandbox.localhost:80:80"],
        [b"sandbox.localhost/x"],
    ],
)
def test_a_second_or_invalid_host_header_gets_400(port: int, hosts: list[bytes]) -> None:
    head = b"GET /v1/health HTTP/1.1\r\n" + b"".join(b"Host: %s\r\n" % host for host in hosts)
    received, _ = _exchange(port, head + b"Connection: close\r\n\r\n")
    status, _, problem = _problem(received)
    assert status.startswith(b"HTTP/1.1 400 ")
    assert problem["code"] == "validation_failed"
    assert problem["errors"] == [{"field": "header.host", "message": problem["errors"][0]["message"]}]


def test_prompt_clients_are_served_on_kept_alive_connections(port: int) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
        first = http.get("/livez")
        second = http.get("/livez", headers={"X-Pad": "a" * 3000})
    assert first.status_code == second.status_code == 200
    assert "server" not in first.headers
    assert first.headers["x-content-type-options"] == "nosniff"


def test_hsts_when_a_trusted_proxy_says_https(port: int) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
        proxied = http.get("/livez", headers={"X-Forwarded-Proto": "https"})
        direct = http.get("/livez")
    assert proxied.headers["strict-transport-security"] == "max-age=31536000"
    assert "strict-transport-security" not in direct.headers


def test_forwarded_proto_from_an_untrusted_address_is_ignored(ports: tuple[int, int]) -> None:
    _, other = ports
    response = httpx.get(f"http://127.0.0.1:{other}/livez", headers={"X-Forwarded-Proto": "https"})
    assert response.status_code == 200
    assert "strict-transport-security" not in response.headers
