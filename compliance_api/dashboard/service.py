"""Account rules of the dashboard: sign up, sign in, sessions, password resets.

Services take the session first and never commit; the request's session commits once after the page handler.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from argon2 import PasswordHasher
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.errors import InvalidEmail, UserExists
from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.dashboard import passwords, queries
from compliance_api.dashboard.i18n import N_, Text, english, text
from compliance_api.dashboard.keys import keyed_hash, new_secret
from compliance_api.dashboard.models import AccountPassword, DashboardSession, PasswordReset
from compliance_api.kit.environment import Environment


class AccountFormError(ValueError):
    """A message for the person filling in the form, shown in their language (`str()` gives the English one)."""

    def __init__(self, message: Text) -> None:
        super().__init__(english(message))
        self.text = message


INVALID_RESET_LINK = text(N_("This link is invalid, used or expired. Ask for a new one."))


@dataclass(frozen=True, slots=True)
class Acting:
    """A signed-in person acting in one environment: the `Actor` the passport, DAC7 and webhooks services take."""

    user_id: uuid.UUID
    environment: Environment
    kind: UserKind

    @classmethod
    def of(cls, account: User, environment: Environment) -> Acting:
        return cls(account.id, environment, account.kind)


async def set_password(
    session: AsyncSession, *, user: User, password: str, hasher: PasswordHasher, now: dt.datetime
) -> None:
    """Set (or replace) a user's password; the caller has checked it with `passwords.problem`."""
    hashed = await passwords.hash_password(password, hasher)
    row = await queries.password_of(session, user.id)
    if row is None:
        queries.add(session, AccountPassword(user_id=user.id, password_hash=hashed, updated_at=now))
    else:
        row.password_hash, row.updated_at = hashed, now
    await session.flush()


def _checked_password(password: str, email: str) -> None:
    problem = passwords.problem(password, email=email)
    if problem is not None:
        raise AccountFormError(problem)


async def sign_up(
    session: AsyncSession, *, email: str, password: str, kind: UserKind, hasher: PasswordHasher, now: dt.datetime
) -> User:
    try:
        normalised = accounts_service.normalise_email(email)
    except InvalidEmail:
        raise AccountFormError(text(N_("Enter a valid e-mail address."))) from None
    _checked_password(password, normalised)
    try:
        user = await accounts_service.create(session, email=normalised, kind=kind, plan=Plan.free)
    except UserExists:
        raise AccountFormError(
            text(N_("An account with this e-mail already exists: sign in, or reset its password."))
        ) from None
    await set_password(session, user=user, password=password, hasher=hasher, now=now)
    return user


async def _user_by_email(session: AsyncSession, email: str) -> User | None:
    try:
        return await accounts_service.get_by_email(session, email=email)
    except InvalidEmail:
        return None


async def authenticate(
    session: AsyncSession, *, email: str, password: str, hasher: PasswordHasher, now: dt.datetime
) -> User | None:
    """The user, if e-mail and password match; else None, after the same work (a dummy hash) whatever went wrong."""
    user = await _user_by_email(session, email)
    stored = await queries.password_of(session, user.id) if user is not None else None
    matches = await passwords.verify(stored.password_hash if stored else None, password, hasher)
    if user is None or stored is None or not matches:
        return None
    if passwords.needs_rehash(stored.password_hash, hasher):
        await set_password(session, user=user, password=password, hasher=hasher, now=now)
    return user


async def start_session(
    session: AsyncSession, *, user: User, pepper: bytes, lifetime: dt.timedelta, now: dt.datetime
) -> str:
    """A new session for `user`; returns the cookie value (stored only as a keyed hash). Drops expired ones."""
    await queries.drop_expired_sessions(session, user.id, now)
    cookie = new_secret()
    queries.add(
        session,
        DashboardSession(
            user_id=user.id, token_hash=keyed_hash(pepper, "session", cookie), created_at=now, expires_at=now + lifetime
        ),
    )
    await session.flush()
    return cookie


async def session_user(session: AsyncSession, *, cookie: str, pepper: bytes, now: dt.datetime) -> User | None:
    """The signed-in user behind a session cookie, or None (unknown, ended or expired)."""
    return await queries.user_of_session(session, keyed_hash(pepper, "session", cookie), now)


async def end_session(session: AsyncSession, *, cookie: str, pepper: bytes) -> None:
    await queries.end_session(session, keyed_hash(pepper, "session", cookie))


async def request_reset(
    session: AsyncSession, *, email: str, pepper: bytes, lifetime: dt.timedelta, now: dt.datetime
) -> tuple[User, str] | None:
    """A single-use reset link token for the account with this e-mail; None (and nothing stored) when none."""
    user = await _user_by_email(session, email)
    if user is None:
        return None
    token = new_secret()
    queries.add(
        session,
        PasswordReset(
            user_id=user.id, token_hash=keyed_hash(pepper, "reset", token), created_at=now, expires_at=now + lifetime
        ),
    )
    await session.flush()
    return user, token


async def _usable_reset(session: AsyncSession, token: str, pepper: bytes, now: dt.datetime) -> PasswordReset | None:
    return await queries.usable_reset(session, keyed_hash(pepper, "reset", token), now)


async def reset_is_usable(session: AsyncSession, *, token: str, pepper: bytes, now: dt.datetime) -> bool:
    return await _usable_reset(session, token, pepper, now) is not None


async def reset_password(
    session: AsyncSession, *, token: str, password: str, pepper: bytes, hasher: PasswordHasher, now: dt.datetime
) -> User:
    """Use a reset link: set the password, spend every open link of the user, sign out every browser."""
    reset = await _usable_reset(session, token, pepper, now)
    if reset is None:
        raise AccountFormError(INVALID_RESET_LINK)
    user = await queries.user(session, reset.user_id)
    await replace_password(session, user=user, password=password, hasher=hasher, now=now)
    return user


async def replace_password(
    session: AsyncSession, *, user: User, password: str, hasher: PasswordHasher, now: dt.datetime
) -> None:
    """Check and set a new password, spend every open reset link of the user, sign out every browser."""
    _checked_password(password, user.email)
    await queries.spend_resets_of(session, user.id, now)
    await queries.end_sessions_of(session, user.id)
    await set_password(session, user=user, password=password, hasher=hasher, now=now)


def reset_link(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/freelancer/reset-password/confirm?token={token}"
