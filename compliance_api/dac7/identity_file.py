"""Reading a bulk file of seller identities (`compliance-api dac7 identities FILE`): a JSON array of objects.

Each object names its seller by `email` or `freelancer_id` and carries the identity's fields (`identity.py`, as the
API's `PUT /v1/dac7/seller/{freelancer_id}/identity` takes them). Every record is checked, format and completeness,
before anything is written; the first bad one stops the import naming its record number and field. Messages never
repeat the value refused (identities are personal data).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import orjson
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import User
from compliance_api.dac7 import queries
from compliance_api.dac7.identity import SellerIdentity, refusals


class IdentityFileError(ValueError):
    """A file that cannot be imported; the message names the record (from 1) and the field at fault."""

    def __init__(self, number: int | None, field: str, message: str) -> None:
        where = f"record {number}, field {field}" if number is not None else f"field {field}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True, slots=True)
class IdentityRecord:
    email: str | None
    freelancer_id: uuid.UUID | None
    identity: SellerIdentity


def _record(number: int, item: object) -> IdentityRecord:
    if not isinstance(item, dict):
        raise IdentityFileError(number, "(record)", "must be a JSON object")
    fields = dict(item)
    email, freelancer_id = fields.pop("email", None), fields.pop("freelancer_id", None)
    if (email is None) == (freelancer_id is None):
        raise IdentityFileError(number, "email", "give exactly one of email and freelancer_id")
    try:
        seller = None if freelancer_id is None else uuid.UUID(str(freelancer_id))
    except ValueError:
        raise IdentityFileError(number, "freelancer_id", "is not a UUID") from None
    try:
        identity = SellerIdentity.model_validate(fields)
    except ValidationError as exc:
        field, message = refusals(exc)[0]
        raise IdentityFileError(number, field, message) from None
    problems = identity.problems()
    if problems:
        raise IdentityFileError(number, *problems[0])
    return IdentityRecord(None if email is None else str(email), seller, identity)


def parse(content: bytes) -> list[IdentityRecord]:
    try:
        items = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(items, list):
        raise ValueError("the file must hold a JSON array of objects")
    return [_record(number, item) for number, item in enumerate(items, start=1)]


async def user_of(session: AsyncSession, record: IdentityRecord, number: int) -> User:
    if record.email is not None:
        return await accounts_service.get_by_email_or_raise(session, email=record.email)
    user = await queries.user(session, record.freelancer_id)
    if user is None:
        raise IdentityFileError(number, "freelancer_id", "no user has this id")
    return user
