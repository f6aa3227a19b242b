"""Where the service is reached: the base of the links it prints and puts in error bodies.

`COMPLIANCE_PUBLIC_BASE_URL` wins when set (behind a proxy only the operator knows the public address). Unset, a
link follows the address and port the request really came in on: the server's end of the connection, never the
Host header, which the client chooses.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.types import Scope

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_PORTS = {"http": 80, "https": 443}
LOOPBACK_FOR_WILDCARD = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}  # noqa: S104 (names, not binds)


def origin(scheme: str, host: str, port: int | None) -> str:
    """`scheme://host[:port]`: an IPv6 address in brackets, the scheme's default port left out."""
    name = f"[{host}]" if ":" in host else host
    if port is None or DEFAULT_PORTS.get(scheme) == port:
        return f"{scheme}://{name}"
    return f"{scheme}://{name}:{port}"


def listening_url(host: str, port: int) -> str:
    """The URL that reaches a server bound to `host:port` from this machine (a wildcard bind on loopback)."""
    return origin("http", LOOPBACK_FOR_WILDCARD.get(host, host), port)


def public_base_url(configured: str, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> str:
    """`COMPLIANCE_PUBLIC_BASE_URL` without its trailing slash, else the URL of a server listening on host:port."""
    return configured.rstrip("/") or listening_url(host, port)


def request_base_url(scope: Scope, configured: str) -> str:
    """The base URL of links answered to this request (see the module docstring)."""
    if configured:
        return configured.rstrip("/")
    server = scope.get("server")
    if not server:
        return listening_url(DEFAULT_HOST, DEFAULT_PORT)
    return origin(str(scope.get("scheme", "http")), str(server[0]), None if server[1] is None else int(server[1]))


def sandbox_base_url(base_url: str, sandbox_host: str) -> str:
    """`base_url` with its host replaced by a sandbox host (the scheme, port and path kept)."""
    parts = urlsplit(base_url)
    return origin(parts.scheme, sandbox_host, parts.port) + parts.path.rstrip("/")
