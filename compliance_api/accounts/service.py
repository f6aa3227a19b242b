"""Account rules: create and find users."""

from __future__ import annotations

import unicodedata

from email_validator import EmailNotValidError, validate_email
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts import queries
from compliance_api.accounts.errors import InvalidEmail, UserExists, UserNotFound
from compliance_api.accounts.models import Plan, User, UserKind


def normalise_email(email: str) -> str:
    try:
        return validate_email(email.strip(), check_deliverability=False).normalized.lower()
    except EmailNotValidError as exc:
        raise InvalidEmail(email, str(exc)) from exc


def email_identity(email: str) -> str:
    """The one spelling of an address that per-account limits key on: the normalised address (as accounts are found
    by), so `V@ＥＸＡＭＰＬＥ。com` and `v@example.com` share one bucket; an address that does not validate matches
    no account, and gets its NFKC case-folded form so that its spellings still share one."""
    try:
        return normalise_email(email)
    except InvalidEmail:
        return unicodedata.normalize("NFKC", email.strip()).casefold()


async def get_by_email(session: AsyncSession, *, email: str) -> User | None:
    return await queries.user_by_email(session, normalise_email(email))


async def get_by_email_or_raise(session: AsyncSession, *, email: str) -> User:
    user = await get_by_email(session, email=email)
    if user is None:
        raise UserNotFound(email)
    return user


async def create(session: AsyncSession, *, email: str, kind: UserKind, plan: Plan) -> User:
    normalised = normalise_email(email)
    if await queries.user_id_by_email(session, normalised) is not None:
        raise UserExists(normalised)
    user = User(email=normalised, kind=kind, plan=plan)
    queries.add(session, user)
    await session.flush()
    return user


async def get_or_create(session: AsyncSession, *, email: str, kind: UserKind, plan: Plan) -> User:
    """The user with this e-mail, updated to `kind` and `plan`, created when missing (used by `demo`)."""
    user = await get_by_email(session, email=email)
    if user is None:
        return await create(session, email=email, kind=kind, plan=plan)
    user.kind, user.plan = kind, plan
    await session.flush()
    return user
