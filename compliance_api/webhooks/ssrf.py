"""SSRF guard: which URLs an endpoint may have, and connecting only to addresses that were checked.

Two checks. At registration the URL is parsed (http/https, no userinfo, a host, IDNA-normalised) and an IP-literal
host is checked (IPv4 in a non-standard numeric form such as `127.1` is refused outright); names are not resolved then
(DNS may change). At delivery the host is resolved once, *every* address must be public, and the request is sent to
the checked address itself: the URL's host is replaced by the IP, the `Host` header and the TLS SNI/certificate check
keep the original name (httpx `sni_hostname`). A name that resolves to a public address when checked and to a private
one a moment later (DNS rebinding) is therefore never connected to privately. Redirects are not followed (a 3xx is a
failed attempt).

Public means: outside every special-purpose range of the IANA registries (private, loopback, link-local, CGNAT,
benchmarking, documentation, multicast, reserved, site-local, unique local, ...), IPv6 inside global unicast 2000::/3,
and, for an IPv6 form that carries IPv4 addresses (NAT64 64:ff9b::/96, IPv4-mapped, SIIT, IPv4-compatible, 6to4,
Teredo server and client), every carried IPv4 address public too. NAT64 local-use 64:ff9b:1::/48 is never public.

Private targets are allowed only when `COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS` is set, and then only in the
embedded deployment or the sandbox. A production deployment takes https URLs only, in both environments and whatever
that setting says; the embedded deployment takes plain http in the sandbox, and in production only with that setting.
Refusals at registration in the embedded deployment name the setting.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass, replace
from urllib.parse import SplitResult, urlsplit, urlunsplit

from compliance_api.config import Deployment, Settings
from compliance_api.kit.environment import Environment

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class UnsafeUrl(Exception):
    """The URL may not be called from this environment; the message says why."""


class Unresolvable(Exception):
    """The host has no address at delivery time (a DNS failure, not a refusal)."""


def _ranges(*rows: tuple[str, str]) -> tuple[tuple[Network, str], ...]:
    return tuple((ipaddress.ip_network(network), kind) for network, kind in rows)


# Hand-rolled from the IANA IPv4 and IPv6 special-purpose address registries rather than `ipaddress.is_global`
# alone: its answer changes between Python versions (3.11 misses 64:ff9b:1::/48, 3fff::/20, fec0::/10 and calls
# every IPv4-mapped address private) and it never looks at the IPv4 address an IPv6 form carries.
IPV4_REFUSED = _ranges(
    ("0.0.0.0/8", "this-network"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared (carrier-grade NAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "6to4 relay anycast"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),
)
IPV6_SPECIAL = _ranges(("::/128", "unspecified"), ("::1/128", "loopback"))
# Forms whose last 32 bits are an IPv4 address the packet ends up at; ::/96 also holds :: and ::1 (checked first).
IPV6_CARRYING_LOW_32 = _ranges(
    ("64:ff9b::/96", "NAT64"),
    ("::ffff:0:0/96", "IPv4-mapped"),
    ("::ffff:0:0:0/96", "SIIT"),
    ("::/96", "IPv4-compatible"),
)
IPV6_REFUSED = _ranges(
    ("64:ff9b:1::/48", "NAT64 local-use"),
    ("100::/64", "discard-only"),
    ("2001::/23", "IETF protocol assignments"),
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "SRv6 segment identifiers"),
    ("fc00::/7", "unique local"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local"),
    ("ff00::/8", "multicast"),
)
IPV6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an address is not public: `kind` names the range, `detail` also the addresses."""

    kind: str
    detail: str


def _listed(address: IPAddress, ranges: tuple[tuple[Network, str], ...]) -> Refusal | None:
    for network, kind in ranges:
        if address in network:
            return Refusal(kind, f"{address} is in the {kind} range {network}")
    return None


def _carried(address: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]] | None:
    """The IPv4 addresses an IPv6 address stands for, each named by the form carrying it; None for plain IPv6."""
    for network, form in IPV6_CARRYING_LOW_32:
        if address in network:
            return [(form, ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF))]
    if address.sixtofour is not None:
        return [("6to4", address.sixtofour)]
    if address.teredo is not None:
        server, client = address.teredo
        return [("Teredo server", server), ("Teredo client", client)]
    return None


def _ipv4_refusal(address: ipaddress.IPv4Address) -> Refusal | None:
    listed = _listed(address, IPV4_REFUSED)
    if listed is None and not address.is_global:
        return Refusal("not globally reachable", f"{address} is not globally reachable")
    return listed


def _ipv6_refusal(address: ipaddress.IPv6Address) -> Refusal | None:
    special = _listed(address, IPV6_SPECIAL)
    if special is not None:
        return special
    carried = _carried(address)
    if carried is not None:
        return _carried_refusal(address, carried)
    listed = _listed(address, IPV6_REFUSED)
    if listed is not None:
        return listed
    if address not in IPV6_GLOBAL_UNICAST:
        return Refusal("outside global unicast", f"{address} is outside global unicast ({IPV6_GLOBAL_UNICAST})")
    if not address.is_global:
        return Refusal("not globally reachable", f"{address} is not globally reachable")
    return None


def _carried_refusal(
    address: ipaddress.IPv6Address, carried: list[tuple[str, ipaddress.IPv4Address]]
) -> Refusal | None:
    """An IPv6 form is as public as every IPv4 address it carries."""
    for form, inner in carried:
        refused = _ipv4_refusal(inner)
        if refused is not None:
            return Refusal(f"{refused.kind} via {form}", f"{address} ({form}): {refused.detail}")
    return None


def refusal(address: IPAddress) -> Refusal | None:
    """Why the guard refuses `address`, or None when it is globally routable unicast."""
    if isinstance(address, ipaddress.IPv4Address):
        return _ipv4_refusal(address)
    return _ipv6_refusal(address)


def is_public(address: IPAddress) -> bool:
    """Globally routable unicast, also for every IPv4 address an IPv6 one carries."""
    return refusal(address) is None


DEVELOPMENT_HINT = (
    "; in development, COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS=true allows private and plain-http targets "
    "(the embedded deployment only; its sandbox takes them unless the setting is false)"
)


@dataclass(frozen=True, slots=True)
class Policy:
    allow_private: bool
    require_https: bool
    hint: str = ""  # ends a refusal of a private or plain-http target: how development allows it


def policy_for(settings: Settings, environment: Environment) -> Policy:
    embedded = settings.deployment is Deployment.embedded
    chosen = settings.webhooks_allow_private_targets
    if chosen is None:  # the default: the sandbox `make run` serves takes local receivers without a restart
        allow_private = embedded and environment is Environment.test
    else:
        allow_private = chosen and (embedded or environment is Environment.test)
    return Policy(
        allow_private=allow_private,
        require_https=not embedded or (environment is Environment.live and not allow_private),
        hint=DEVELOPMENT_HINT if embedded else "",
    )


@dataclass(frozen=True, slots=True)
class Target:
    """Where a request really goes: `url` names the checked IP; `host` and `sni` carry the original name."""

    url: str
    host: str
    sni: str | None


def _ip_literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _is_legacy_ipv4(host: str) -> bool:
    """`127.1`, `0x7f.0.0.1`, `2130706433`: forms `inet_aton` and browsers read as IPv4 but `ipaddress` does not."""
    try:
        socket.inet_aton(host)
    except OSError:
        return False
    return True


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
        raise UnsafeUrl(f"the URL must use https{policy.hint}")
    literal = _ip_literal(host)
    if literal is None and _is_legacy_ipv4(host):
        raise UnsafeUrl(f"{host} is an IPv4 address in a non-standard form; write it as four decimal numbers")
    if isinstance(literal, ipaddress.IPv6Address) and literal.scope_id is not None:
        raise UnsafeUrl("the address must not name a zone (%)")
    refused = None if literal is None or policy.allow_private else refusal(literal)
    if refused is not None:
        raise UnsafeUrl(f"{refused.detail}, not a public address{policy.hint}")
    if host == "localhost" or host.endswith(".localhost"):
        if not policy.allow_private:
            raise UnsafeUrl(f"localhost is not a public address{policy.hint}")
    return url.strip()


async def resolve(host: str, port: int) -> list[IPAddress]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


def _check_resolved(host: str, addresses: list[IPAddress]) -> None:
    """Every address must be public; the message names the kinds of range, not the addresses a name resolved to
    (with split-horizon DNS they would map the internal network for whoever registered the name)."""
    kinds = dict.fromkeys(r.kind for r in map(refusal, addresses) if r is not None)
    if kinds:
        raise UnsafeUrl(f"{host} resolves to a non-public address ({', '.join(kinds)})")


async def pin(url: str, policy: Policy) -> Target:
    """Resolve once, check every address, and aim the request at the first checked one (a refusal here is logged
    with the delivery, without the development hint the registration's refusal carries)."""
    policy = replace(policy, hint="")
    check_url(url, policy)
    parts, host, port = _parse(url)
    literal = _ip_literal(host)
    try:
        addresses = [literal] if literal is not None else await resolve(host, port)
    except OSError as exc:
        raise Unresolvable(f"{host} does not resolve: {exc}") from None
    if not addresses:
        raise Unresolvable(f"{host} does not resolve")
    if not policy.allow_private:
        _check_resolved(host, addresses)
    address = addresses[0]
    shown = f"[{address}]" if address.version == 6 else str(address)
    netloc = f"{shown}:{parts.port}" if parts.port else shown
    host_header = parts.netloc.rsplit("@", 1)[-1]
    return Target(
        url=urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")),
        host=host_header,
        sni=host if parts.scheme == "https" and literal is None else None,
    )
