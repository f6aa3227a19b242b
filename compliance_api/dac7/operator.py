"""The reporting platform operator's identity, set once per environment (`compliance-api dac7 operator`).

What DPI's `PlatformOperator` needs: name, TIN and its issuing state, the member state it reports to, its nexus
(`RPONEX1`–`RPONEX5`: tax resident, incorporated, managed, has a permanent establishment in the Union, or a non-Union
operator) and its address; a VAT number when it has one.
"""

from __future__ import annotations

import datetime as dt

from pydantic import Field, field_validator
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.dac7 import queries
from compliance_api.dac7.identity import Dac7Address, IdentityPart
from compliance_api.dac7.models import Dac7Operator
from compliance_api.dac7.nexus import Nexus
from compliance_api.dac7.tin import GENERIC_TIN, member_state
from compliance_api.kit.environment import Environment


class OperatorIdentity(IdentityPart):
    name: str = Field(min_length=1, max_length=200)
    tin: str = Field(min_length=1, max_length=200)
    tin_issued_by: str
    country: str = Field(description="The member state the operator reports to.")
    nexus: Nexus
    vat: str | None = Field(default=None, max_length=200)
    address: Dac7Address

    _states = field_validator("tin_issued_by", "country")(member_state)

    @field_validator("tin")
    @classmethod
    def _tin(cls, value: str) -> str:
        compact = "".join(value.split()).upper()
        if not GENERIC_TIN.match(compact):
            raise ValueError("must be 2 to 20 letters and digits")
        return compact


def _identity(row: Dac7Operator) -> OperatorIdentity:
    address = Dac7Address(
        country=row.address_country, street=row.street, building=row.building, post_code=row.post_code, city=row.city
    )
    return OperatorIdentity(
        name=row.name,
        tin=row.tin,
        tin_issued_by=row.tin_issued_by,
        country=row.country,
        nexus=Nexus(row.nexus),
        vat=row.vat,
        address=address,
    )


async def operator_of(session: AsyncSession, environment: Environment) -> OperatorIdentity | None:
    row = await queries.operator_of(session, environment)
    return None if row is None else _identity(row)


async def set_operator(
    session: AsyncSession, environment: Environment, identity: OperatorIdentity, now: dt.datetime
) -> OperatorIdentity:
    """Record (or replace) the environment's operator."""
    row = await queries.operator_of(session, environment)
    if row is None:
        row = Dac7Operator(environment=environment)
        queries.add(session, row)
    address = identity.address
    row.name, row.tin, row.tin_issued_by, row.country = (
        identity.name,
        identity.tin,
        identity.tin_issued_by,
        identity.country,
    )
    row.nexus, row.vat, row.updated_at = identity.nexus.value, identity.vat, now
    row.address_country, row.street, row.building = address.country, address.street, address.building
    row.post_code, row.city = address.post_code, address.city
    await session.flush()
    return identity
