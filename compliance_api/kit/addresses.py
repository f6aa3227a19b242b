"""Where the service is reached: the base of the links it prints and puts in error bodies.

`COMPLIANCE_PUBLIC_BASE_URL` wins when set (behind a proxy only the operator knows the public address). Unset, a
link follows the address and port the request really came in on: the server's end of the connection, never the
Host header, which the client chooses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
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


@dataclass(frozen=True, slots=True)
class Bases:
    """The base URLs of production and of the sandbox, as seen from one address (None: not reached from there)."""

    production: str | None
    sandbox: str | None


def _bases(base_url: str, configured: str, sandbox_origin: str, sandbox_hosts: tuple[str, ...]) -> Bases:
    """Behind a public base URL, or without a sandbox port: the sandbox is the same URL on the first sandbox host;
    else it is the sandbox port's origin."""
    if configured or not sandbox_origin:
        return Bases(base_url, sandbox_base_url(base_url, sandbox_hosts[0]) if sandbox_hosts else None)
    return Bases(base_url, sandbox_origin)


def listening_bases(
    configured: str, host: str, port: int, sandbox_port: int | None, sandbox_hosts: tuple[str, ...]
) -> Bases:
    """Where a server listening on host:port (and on `sandbox_port`) is reached from this machine."""
    sandbox_origin = listening_url(host, sandbox_port) if sandbox_port else ""
    return _bases(public_base_url(configured, host, port), configured, sandbox_origin, sandbox_hosts)


def request_bases(scope: Scope, configured: str, sandbox_port: int | None, sandbox_hosts: tuple[str, ...]) -> Bases:
    """Where production and the sandbox are reached, from the address this request came in on: a request on the
    sandbox port sees only the sandbox (that port answers nothing else)."""
    base_url = request_base_url(scope, configured)
    server = scope.get("server")
    if configured or sandbox_port is None:
        return Bases(base_url, sandbox_base_url(base_url, sandbox_hosts[0]) if sandbox_hosts else None)
    if server and server[1] == sandbox_port:
        return Bases(None, base_url)
    name = str(server[0]) if server else DEFAULT_HOST
    return Bases(base_url, origin(str(scope.get("scheme", "http")), name, sandbox_port))
