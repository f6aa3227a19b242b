"""API token format: `sk_live_`/`sk_test_` + 32 base62 characters + a 6-character base62 CRC32 checksum.

The checksum lets the server (and secret scanners) reject a mistyped token without a database lookup;
tokens are stored only as a keyed SHA-256 (HMAC with the server pepper).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string
import zlib
from dataclasses import dataclass

from compliance_api.kit.environment import Environment

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
_BASE62_SET = frozenset(BASE62)
PREFIXES = {Environment.live: "sk_live_", Environment.test: "sk_test_"}
BODY_LENGTH = 32
CHECKSUM_LENGTH = 6
PREFIX_LENGTH = 8
TOKEN_LENGTH = PREFIX_LENGTH + BODY_LENGTH + CHECKSUM_LENGTH
TOKEN_PATTERN = r"^sk_(live|test)_[0-9A-Za-z]{38}$"  # noqa: S105 (a format, not a secret)


def _base62(number: int, width: int) -> str:
    digits = []
    for _ in range(width):
        number, rest = divmod(number, 62)
        digits.append(BASE62[rest])
    return "".join(reversed(digits))


def checksum(prefix_and_body: str) -> str:
    return _base62(zlib.crc32(prefix_and_body.encode("ascii")), CHECKSUM_LENGTH)


def generate(environment: Environment) -> str:
    prefix_and_body = PREFIXES[environment] + "".join(secrets.choice(BASE62) for _ in range(BODY_LENGTH))
    return prefix_and_body + checksum(prefix_and_body)


def derived_body(key: bytes, message: bytes) -> str:
    """32 base62 characters that are HMAC-SHA256(key, message), for tokens that must be re-derivable rather than
    stored (62**32 is below 2**256: reducing the digest modulo it skews no character measurably)."""
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return _base62(int.from_bytes(digest) % 62**BODY_LENGTH, BODY_LENGTH)


def derive(environment: Environment, key: bytes, message: bytes) -> str:
    """A well-formed token whose body is `derived_body(key, message)`."""
    prefix_and_body = PREFIXES[environment] + derived_body(key, message)
    return prefix_and_body + checksum(prefix_and_body)


@dataclass(frozen=True, slots=True)
class ParsedToken:
    token: str
    environment: Environment

    @property
    def last4(self) -> str:
        return self.token[-4:]


def parse(candidate: str) -> ParsedToken | None:
    """The token's environment if it is well formed and its checksum matches, else None (no I/O)."""
    if len(candidate) != TOKEN_LENGTH:
        return None
    prefix = candidate[:PREFIX_LENGTH]
    if prefix == "sk_live_":
        environment = Environment.live
    elif prefix == "sk_test_":
        environment = Environment.test
    else:
        return None
    rest = candidate[PREFIX_LENGTH:]
    if not _BASE62_SET.issuperset(rest):
        return None
    expected = checksum(candidate[: PREFIX_LENGTH + BODY_LENGTH])
    if not hmac.compare_digest(expected, candidate[-CHECKSUM_LENGTH:]):
        return None
    return ParsedToken(candidate, environment)


def malformation(candidate: str) -> str:
    """Why `parse` refused `candidate`, in words an integrator can act on (only on the failure path)."""
    if not candidate.startswith(tuple(PREFIXES.values())):
        return "A token starts with `sk_live_` (production) or `sk_test_` (sandbox)."
    if len(candidate) != TOKEN_LENGTH:
        return (
            f"A token is {TOKEN_LENGTH} characters long; this one has {len(candidate)}: "
            "it may have been cut short or pasted twice."
        )
    if not _BASE62_SET.issuperset(candidate[PREFIX_LENGTH:]):
        return "After its prefix a token holds only letters and digits."
    return "The token is mistyped: its checksum does not match."


def hash_token(token: str, pepper: bytes) -> str:
    return hmac.new(pepper, token.encode("ascii"), hashlib.sha256).hexdigest()
