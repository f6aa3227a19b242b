"""`compliance-api serve` as a real process: slow clients are cut off, no server banner, HSTS behind a trusted proxy."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.factories import create_token
from tests.servers import free_port, server

READ_TIMEOUT = 0.5


@contextmanager
def serve(database_url: str, var_dir: Path, **settings: str) -> Iterator[int]:
    """`compliance-api serve` on a free port with `settings` (environment variables); yields the port."""
    port = free_port()
    with server(
        database_url=database_url,
        redis_url=os.environ.get("REDIS_URL", ""),
        var_dir=str(var_dir),
        port=port,
        via_cli=True,
        extra_env=settings,
    ):
        yield port


@pytest.fixture(scope="module")
def port(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    settings = {
        "COMPLIANCE_REQUEST_READ_TIMEOUT_SECONDS": str(READ_TIMEOUT),
        "COMPLIANCE_MAX_HEADER_BYTES": "4096",
    }
    with serve(database_url, tmp_path_factory.mktemp("var"), **settings) as bound:
        yield bound


def _exchange(port: int, *chunks: bytes) -> tuple[bytes, float]:
    """Send `chunks` and stop; read until the server closes. Returns (everything read, seconds until closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        started = time.monotonic()
        for chunk in chunks:
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
    assert received.startswith(b"HTTP/1.1 408 ")
    assert elapsed >= READ_TIMEOUT * 0.8


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


def test_forwarded_proto_from_an_untrusted_address_is_ignored(database_url: str, tmp_path: Path) -> None:
    with serve(database_url, tmp_path / "var", COMPLIANCE_FORWARDED_ALLOW_IPS="10.9.8.7") as other:
        response = httpx.get(f"http://127.0.0.1:{other}/livez", headers={"X-Forwarded-Proto": "https"})
    assert response.status_code == 200
    assert "strict-transport-security" not in response.headers
