"""Addresses the SSRF guard refuses (with the kind of range it names) and public ones, for table-driven tests."""

from __future__ import annotations

# (address, the kind of range the guard names): every form the attack run got through, and the usual ranges.
REFUSED = [
    ("64:ff9b::a9fe:a9fe", "link-local via NAT64"),  # 169.254.169.254 (cloud metadata) through NAT64
    ("64:ff9b::7f00:1", "loopback via NAT64"),
    ("64:ff9b:1::808:808", "NAT64 local-use"),  # never public, whatever it carries
    ("::ffff:0:7f00:1", "loopback via SIIT"),
    ("::ffff:0:a00:1", "private via SIIT"),
    ("::ffff:127.0.0.1", "loopback via IPv4-mapped"),
    ("::ffff:10.0.0.1", "private via IPv4-mapped"),
    ("::7f00:1", "loopback via IPv4-compatible"),
    ("::a9fe:a9fe", "link-local via IPv4-compatible"),
    ("2002:7f00:1::", "loopback via 6to4"),
    ("2002:c0a8:101::1", "private via 6to4"),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback via Teredo client"),  # client bits inverted: 127.0.0.1
    ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private via Teredo client"),  # 10.0.0.1
    ("2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7", "link-local via Teredo server"),
    ("fec0::1", "site-local"),
    ("fe80::1", "link-local"),
    ("fd00:ec2::254", "unique local"),
    ("::1", "loopback"),
    ("::", "unspecified"),
    ("ff02::1", "multicast"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation"),
    ("100::1", "discard-only"),
    ("2001:2::1", "IETF protocol assignments"),
    ("4000::1", "outside global unicast"),
    ("127.0.0.1", "loopback"),
    ("10.0.0.8", "private"),
    ("172.16.5.4", "private"),
    ("192.168.1.1", "private"),
    ("100.64.0.1", "shared (carrier-grade NAT)"),
    ("169.254.169.254", "link-local"),
    ("0.0.0.0", "this-network"),
    ("0.1.2.3", "this-network"),
    ("192.0.0.8", "IETF protocol assignments"),
    ("192.0.2.1", "documentation"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"),
    ("198.18.0.1", "benchmarking"),
    ("198.19.255.255", "benchmarking"),
    ("192.88.99.1", "6to4 relay anycast"),
    ("224.0.0.1", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
]
ATTACK_RUN = ["64:ff9b::a9fe:a9fe", "::ffff:0:7f00:1", "::7f00:1", "fec0::1"]
PUBLIC = [
    "93.184.215.14",
    "2606:4700:4700::1111",
    "::ffff:93.184.215.14",
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    "::ffff:0:808:808",  # SIIT
    "::808:808",  # IPv4-compatible
    "2002:808:808::1",  # 6to4
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",  # Teredo: server 65.54.227.120, client 8.8.8.8
]
# One of each form and range family, for the slower dashboard round trips.
SAMPLE = [*ATTACK_RUN, "64:ff9b:1::808:808", "::ffff:10.0.0.1", "2002:7f00:1::", "2001:0:4136:e378:8000:63bf:80ff:fffe"]
SAMPLE += ["2001:db8::1", "3fff::1", "100.64.0.1", "198.18.0.1", "192.0.2.1", "0.0.0.0"]


def url_of(address: str) -> str:
    """An https URL whose host is `address` (bracketed when IPv6)."""
    return f"https://[{address}]/hook" if ":" in address else f"https://{address}/hook"
