"""Passwords: argon2id with the parameters of `COMPLIANCE_PASSWORD_HASH_PROFILE` (RFC 9106's low-memory choice by
default), hashed off the event loop.

An unknown e-mail, or a user without a password, is checked against a dummy hash, so a wrong password and an
unknown account cost the same time and give the same answer.
"""

from __future__ import annotations

import asyncio
import functools
import secrets

from argon2 import Parameters, PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError

from compliance_api.config import PasswordHashProfile
from compliance_api.dashboard.i18n import N_, Text, text

MIN_LENGTH = 10
MAX_LENGTH = 256  # argon2 takes any length; a cap keeps a huge form field from being hashed

PARAMETERS: dict[PasswordHashProfile, Parameters] = {
    PasswordHashProfile.rfc_9106_low_memory: profiles.RFC_9106_LOW_MEMORY,
    PasswordHashProfile.rfc_9106_high_memory: profiles.RFC_9106_HIGH_MEMORY,
    PasswordHashProfile.cheapest: profiles.CHEAPEST,
}


@functools.cache
def hasher_for(profile: PasswordHashProfile) -> PasswordHasher:
    return PasswordHasher.from_parameters(PARAMETERS[profile])


@functools.cache
def _dummy_hash(hasher: PasswordHasher) -> str:
    return hasher.hash(secrets.token_urlsafe(16))


def problem(password: str, *, email: str) -> Text | None:
    """Why `password` cannot be used, or None."""
    if len(password) < MIN_LENGTH:
        return text(N_("Use at least %(minimum)s characters."), minimum=MIN_LENGTH)
    if len(password) > MAX_LENGTH:
        return text(N_("Use at most %(maximum)s characters."), maximum=MAX_LENGTH)
    if password.strip().lower() == email.strip().lower():
        return text(N_("Do not use your e-mail address as your password."))
    return None


async def hash_password(password: str, hasher: PasswordHasher) -> str:
    return await asyncio.to_thread(hasher.hash, password)


def _verify(stored: str | None, password: str, hasher: PasswordHasher) -> bool:
    try:
        return hasher.verify(stored or _dummy_hash(hasher), password[:MAX_LENGTH]) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


async def verify(stored: str | None, password: str, hasher: PasswordHasher) -> bool:
    """Whether `password` matches `stored`; None (no such account or no password) costs the same and is False."""
    return await asyncio.to_thread(_verify, stored, password, hasher)


def needs_rehash(stored: str, hasher: PasswordHasher) -> bool:
    """Whether `stored` was made with other parameters than `hasher`'s (it is then re-hashed at sign-in)."""
    return hasher.check_needs_rehash(stored)
