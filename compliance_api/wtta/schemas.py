from __future__ import annotations

from datetime import datetime

from pydantic import Field

from compliance_api.kit.schemas import Livemode, ResponseSchema
from compliance_api.wtta.models import AdmissionStatus


class WttaAdmissionOut(ResponseSchema):
    """A supplier's admission under the WTTA, as last imported into the cache."""

    kvk_number: str = Field(description="KvK (Chamber of Commerce) number, 8 digits.", examples=["99000003"])
    legal_name: str = Field(examples=["Voorbeeld Uitzendbureau B.V."])
    admission_status: AdmissionStatus = Field(
        description="`unknown`, `applied` (reported under transitional law or application pending), `admitted`, "
        "`conditionally_admitted` (provisional admission of a starter), `revoked`, `suspended`, `expired` "
        "(a provisional admission or transitional cover that lapsed) or `not_required` (exempt)."
    )
    admission_number: str | None = Field(description="The authority's admission number, when it has one.")
    admitted_at: datetime | None
    expires_at: datetime | None
    source: str = Field(description="The register file or feed this admission was last imported from.")
    source_url: str | None = Field(description="Where that source is published.")
    last_verified_at: datetime = Field(description="When the last import containing this number ran.")
    missing_from_source_at: datetime | None = Field(
        default=None,
        description="Set when a complete register snapshot imported later no longer contained this number; the "
        "admission keeps its last known data. Null while the source still lists it.",
    )
    livemode: Livemode


class StatusChangeOut(ResponseSchema):
    from_status: AdmissionStatus | None = Field(description="Null for the first status the cache recorded.")
    to_status: AdmissionStatus
    changed_at: datetime = Field(description="When the import that saw the change ran.")
    source: str


class WttaHistoryOut(ResponseSchema):
    kvk_number: str
    changes: list[StatusChangeOut] = Field(description="Oldest first.")
    livemode: Livemode
