"""Passwords: argon2id (argon2-cffi's RFC 9106 low-memory profile), hashed off the event loop.

An unknown e-mail, or a user without a password, is checked against a dummy hash, so a wrong password and an
unknown account cost the same time and give the same answer.
"""

from __future__ import annotations

import asyncio
import functools
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

MIN_LENGTH = 10
MAX_LENGTH = 256  # argon2 takes any length; a cap keeps a huge form field from being hashed

HASHER = PasswordHasher()  # argon2id by default


@functools.cache
def _dummy_hash() -> str:
    return HASHER.hash(secrets.token_urlsafe(16))


def problem(password: str, *, email: str) -> str | None:
    """Why `password` cannot be used, or None."""
    if len(password) < MIN_LENGTH:
        return f"Use at least {MIN_LENGTH} characters."
    if len(password) > MAX_LENGTH:
        return f"Use at most {MAX_LENGTH} characters."
    if password.strip().lower() == email.strip().lower():
        return "Do not use your e-mail address as your password."
    return None


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(HASHER.hash, password)


def _verify(stored: str | None, password: str) -> bool:
    try:
        return HASHER.verify(stored or _dummy_hash(), password[:MAX_LENGTH]) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


async def verify(stored: str | None, password: str) -> bool:
    """Whether `password` matches `stored`; None (no such account or no password) costs the same and is False."""
    return await asyncio.to_thread(_verify, stored, password)


def needs_rehash(stored: str) -> bool:
    return HASHER.check_needs_rehash(stored)
