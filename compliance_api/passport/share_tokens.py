"""Share-tokens: `pst_` + 32 base62 characters (≈190 random bits), stored only as a keyed hash.

Verification looks the token up by its keyed hash (an indexed equality in the database), so no secret is ever
compared in Python; the hash is keyed with the server pepper and domain-separated from API token hashes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from compliance_api.auth.tokens import BASE62, derived_body

PREFIX = "pst_"
BODY_LENGTH = 32
MAX_LENGTH = 128


def generate() -> str:
    return PREFIX + "".join(secrets.choice(BASE62) for _ in range(BODY_LENGTH))


def derive(key: bytes, message: bytes) -> str:
    """A share-token that is HMAC-SHA256(key, message), for share-tokens re-derived rather than stored (the demo's)."""
    return PREFIX + derived_body(key, message)


def hash_share_token(token: str, pepper: bytes) -> str:
    return hmac.new(pepper, b"passport-share:" + token.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
