"""Request and response bodies of the passport operations (the own passport and the verifier's summary)."""

from __future__ import annotations

import datetime as dt
import uuid
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from compliance_api.kit.pagination import Page
from compliance_api.kit.schemas import ACCEPT_WHOLE_FLOATS, Livemode, RequestSchema, ResponseSchema
from compliance_api.passport.catalogue import packaged_catalogue

if TYPE_CHECKING:
    CheckId = str
    ComplianceLevel = str
else:
    # Built from the catalogue file, so the contract's enums are the published catalogue.
    CheckId = StrEnum("CheckId", [(c.id, c.id) for c in packaged_catalogue().checks])
    ComplianceLevel = StrEnum("ComplianceLevel", [(lv.level, lv.level) for lv in packaged_catalogue().levels])

MAX_TTL_DAYS = 365


class Verification(ResponseSchema):
    check: CheckId
    name: str
    verified_on: dt.date
    expires_on: dt.date | None = Field(description="Last day the verification counts; null: it does not expire.")
    evidence_ref: str = Field(description="Reference to the evidence the operator checked.")
    valid: bool = Field(description="Counts towards the score today.")


class OwnPassport(ResponseSchema):
    """The freelancer's own passport: score, level, verified, with the environment and the verifications behind it."""

    compliance_score: int = Field(ge=0, le=100, description="Sum of the catalogue weights of the valid verifications.")
    compliance_level: ComplianceLevel = Field(description="The highest catalogue level whose minimum score is met.")
    sector: str | None
    verified: bool = Field(description="Every check the catalogue requires for `verified` is valid.")
    last_updated: dt.datetime
    freelancer_id: uuid.UUID
    livemode: Livemode
    verifications: list[Verification]


class ShareCreate(RequestSchema):
    ttl_days: Annotated[int, Field(ge=1, le=MAX_TTL_DAYS), ACCEPT_WHOLE_FLOATS] = Field(
        default=30, description="Lifetime of the share-token, in days."
    )


class Share(ResponseSchema):
    id: uuid.UUID
    last4: str
    created_at: dt.datetime
    expires_at: dt.datetime
    revoked_at: dt.datetime | None
    status: str = Field(description="`active`, `expired` or `revoked`.")
    livemode: Livemode


class ShareCreated(Share):
    token: str = Field(description="The share-token, shown once: it is stored only as a keyed hash.")


class ShareList(Page[Share]):
    """A page of share-tokens, newest first."""


class ShareView(ResponseSchema):
    viewed_at: dt.datetime
    viewer_id: uuid.UUID
    viewer_email: str
    livemode: Livemode


class ShareViewList(Page[ShareView]):
    """A page of verifications, newest first."""


class PassportSummary(ResponseSchema):
    """What a verifier sees; `jws_signature` signs every other field (its JWS payload)."""

    freelancer_id: uuid.UUID
    issued_at: dt.datetime
    expires_at: dt.datetime = Field(
        description="When this summary stops holding: the share-token's expiry or the first counted verification's "
        "end, whichever comes first."
    )
    compliance_score: int = Field(ge=0, le=100)
    verifications: list[CheckId] = Field(description="The catalogue ids of the valid verifications.")
    livemode: Livemode
    jws_signature: str = Field(
        description="Compact JWS (alg EdDSA, Ed25519, `kid` in the header) whose payload is this summary without "
        "`jws_signature`; public keys at `/.well-known/jwks.json` of the same host."
    )
