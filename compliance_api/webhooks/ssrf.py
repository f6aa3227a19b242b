"""SSRF guard: which URLs an endpoint may have, and connecting only to addresses that were checked.

Two checks. At registration the URL is parsed (http/https, no userinfo, a host, IDNA-normalised) and an IP-literal
host is checked; names are not resolved then (DNS may change). At delivery the host is resolved once, *every*
address must be public (`ipaddress` `is_global`, after unwrapping IPv4-mapped, 6to4 and Teredo IPv6 forms), and the
request is sent to the checked address itself: the URL's host is replaced by the IP, the `Host` header and the TLS
SNI/certificate check keep the original name (httpx `sni_hostname`). A name that resolves to a public address when
checked and to a private one a moment later (DNS rebinding) is therefore never connected to privately. Redirects are
not followed (a 3xx is a failed attempt).

Private targets are allowed only when `COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS` is set, and then only in the
embedded deployment or the sandbox; production URLs must also be https.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit, urlunsplit

from compliance_api.config import Deployment, Settings
from compliance_api.kit.environment import Environment

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeUrl(Exception):
    """The URL may not be called from this environment; the message says why."""


@dataclass(frozen=True, slots=True)
class Policy:
    allow_private: bool
    require_https: bool


def policy_for(settings: Settings, environment: Environment) -> Policy:
    allow_private = settings.webhooks_allow_private_targets and (
        settings.deployment is Deployment.embedded or environment is Environment.test
    )
    return Policy(allow_private=allow_private, require_https=environment is Environment.live and not allow_private)


@dataclass(frozen=True, slots=True)
class Target:
    """Where a request really goes: `url` names the checked IP; `host` and `sni` carry the original name."""

    url: str
    host: str
    sni: str | None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def is_public(address: IPAddress) -> bool:
    """Globally routable unicast, also for every IPv4 address an IPv6 one carries."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None and not is_public(inner):
            return False
    return address.is_global and not address.is_multicast


def _ip_literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _parse(url: str) -> tuple[SplitResult, str, int]:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise UnsafeUrl(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeUrl("the URL must start with https:// (or http:// where allowed)")
    if parts.username is not None or parts.password is not None:
        raise UnsafeUrl("the URL must not contain credentials")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UnsafeUrl("the URL has no host")
    try:
        host = host if _ip_literal(host) else host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise UnsafeUrl("the host is not a valid domain name") from None
    return parts, host, port or (443 if parts.scheme == "https" else 80)


def check_url(url: str, policy: Policy) -> str:
    """Refuse what is wrong without resolving: scheme, credentials, a missing host, a private IP literal."""
    parts, host, _ = _parse(url)
    if policy.require_https and parts.scheme != "https":
        raise UnsafeUrl("production webhook URLs must use https")
    literal = _ip_literal(host)
    if literal is not None and not policy.allow_private and not is_public(literal):
        raise UnsafeUrl(f"{host} is not a public address")
    if host == "localhost" or host.endswith(".localhost"):
        if not policy.allow_private:
            raise UnsafeUrl("localhost is not a public address")
    return url.strip()


async def resolve(host: str, port: int) -> list[IPAddress]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


async def pin(url: str, policy: Policy) -> Target:
    """Resolve once, check every address, and aim the request at the first checked one."""
    check_url(url, policy)
    parts, host, port = _parse(url)
    literal = _ip_literal(host)
    try:
        addresses = [literal] if literal is not None else await resolve(host, port)
    except OSError as exc:
        raise UnsafeUrl(f"{host} does not resolve: {exc}") from None
    if not addresses:
        raise UnsafeUrl(f"{host} does not resolve")
    if not policy.allow_private:
        refused = [str(a) for a in addresses if not is_public(a)]
        if refused:
            raise UnsafeUrl(f"{host} resolves to a non-public address ({', '.join(refused)})")
    address = addresses[0]
    shown = f"[{address}]" if address.version == 6 else str(address)
    netloc = f"{shown}:{parts.port}" if parts.port else shown
    host_header = parts.netloc.rsplit("@", 1)[-1]
    return Target(
        url=urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")),
        host=host_header,
        sni=host if parts.scheme == "https" and literal is None else None,
    )
