"""Random secrets for the browser (session cookies, reset links) and their keyed hashes, the only thing stored."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_secret() -> str:
    """256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def keyed_hash(pepper: bytes, purpose: str, value: str) -> str:
    """HMAC-SHA256 keyed with the server secret and separated by purpose, hex."""
    return hmac.new(pepper, f"dashboard-{purpose}:{value}".encode(), hashlib.sha256).hexdigest()
