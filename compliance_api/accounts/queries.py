"""The accounts' statements. The rules that call them live in `service.py`."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts.models import User


async def user_by_email(session: AsyncSession, normalised: str) -> User | None:
    return await session.scalar(select(User).where(User.email == normalised))


async def user_id_by_email(session: AsyncSession, normalised: str) -> uuid.UUID | None:
    return await session.scalar(select(User.id).where(User.email == normalised))


def add(session: AsyncSession, user: User) -> None:
    session.add(user)
