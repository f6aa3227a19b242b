"""Request and response bodies of the DAC7 operations (the seller snapshot and the grants)."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, PlainSerializer

from compliance_api.dac7.identity import SellerIdentity
from compliance_api.kit.pagination import Page
from compliance_api.kit.patterns import UUID_PATTERN
from compliance_api.kit.schemas import RequestSchema, ResponseSchema

EurAmount = Annotated[Decimal, PlainSerializer(float, return_type=float, when_used="json")]
"""Kept as Decimal (exact cents); written as a JSON number."""


class Dac7SellerOut(ResponseSchema):
    """The seller's figures for the current calendar year (UTC), plus fees, taxes and reportability."""

    freelancer_id: uuid.UUID
    reporting_year: int = Field(examples=[2026])
    tin: str = Field(
        description="The first tax identification number recorded, in its member state's compact form; empty when "
        "the seller has none (its member state issues none; `GET …/identity` says more)."
    )
    member_state: str = Field(
        description="ISO 3166-1 alpha-2 code of the seller's EU member state of residence (the address's, else the "
        "state that issued its TIN)."
    )
    total_consideration_eur: EurAmount = Field(
        description="Consideration paid or credited this year, net of the platform's fees, commissions and the "
        "taxes it withheld (DAC7 Annex V).",
        examples=[12345.67],
    )
    number_of_activities: int = Field(description="Relevant activities this year.")
    reported_at: dt.datetime | None = Field(
        description="When this year was first exported in a DPI report; null until then."
    )
    fees_eur: EurAmount = Field(description="Fees and commissions withheld or charged this year.")
    taxes_eur: EurAmount = Field(description="Taxes withheld this year.")
    currency: Literal["EUR"] = "EUR"
    reportable: bool = Field(
        description="Not an excluded seller: any personal service makes a seller reportable; a seller of goods only "
        "is excluded below 30 sales and at most EUR 2,000 consideration in the year."
    )
    livemode: bool


class GrantCreate(RequestSchema):
    grantee_id: str = Field(
        pattern=UUID_PATTERN,
        json_schema_extra={"format": "uuid"},
        description="User id of the account (e.g. a business) that may read your DAC7 snapshot.",
        examples=["6f1c1a52-4c1e-4b8e-9d3e-2f7a4f0b9c11"],
    )

    @property
    def grantee_uuid(self) -> uuid.UUID:
        return uuid.UUID(self.grantee_id)


class Grant(ResponseSchema):
    id: uuid.UUID
    grantee_id: uuid.UUID
    created_at: dt.datetime
    revoked_at: dt.datetime | None
    status: Literal["active", "revoked"]


class GrantList(Page[Grant]):
    """A page of grants, newest first."""


class Dac7IdentityOut(SellerIdentity):
    """What is held about a seller for DAC7 in this environment, as the seller (and its grant holders) may read it,
    so the seller can have it corrected (Directive 2021/514 requires that sellers are informed)."""

    model_config = ConfigDict(extra="forbid", from_attributes=True)

    freelancer_id: uuid.UUID
    residence: str = Field(description="The member state of residence reported (`ResCountryCode`).", examples=["NL"])
    complete: bool = Field(description="Whether a DAC7 report has everything it needs about this seller.")
    lacking: list[str] = Field(description="The fields a DAC7 report still lacks (empty when complete).")
    updated_at: dt.datetime
    livemode: bool
