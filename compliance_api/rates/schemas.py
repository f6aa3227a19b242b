from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import Field

from compliance_api.kit.schemas import Livemode, ResponseSchema


class RateBenchmarkOut(ResponseSchema):
    sector: str = Field(description="Sector slug (see `GET /v1/rates/sectors`).", examples=["ict"])
    region: str = Field(description="`NL` (whole country) or an ISO 3166-2:NL province code.", examples=["NL"])
    p25_eur: float = Field(description="25th percentile rate (EUR per hour, excl. VAT).", examples=[78.5])
    p50_eur: float = Field(description="Median rate (EUR per hour, excl. VAT).", examples=[92.0])
    p75_eur: float = Field(description="75th percentile rate (EUR per hour, excl. VAT).", examples=[108.25])
    sample_size: int = Field(description="Observations used.", examples=[412])
    as_of: date = Field(description="Date of the newest observation used.", examples=["2026-06-30"])
    currency: Literal["EUR"] = "EUR"
    vat: Literal["excluded"] = Field(default="excluded", description="Rates are excluding VAT.")
    window_months: int = Field(description="Only observations of this many months up to `as_of` count.", examples=[24])
    synthetic: bool = Field(
        description="`true` when generated (sandbox or demo) observations were used, not real ones."
    )
    source: str = Field(description="How the figures were computed and from what.")
    livemode: Livemode


class RateSectorOut(ResponseSchema):
    sector: str = Field(examples=["ict"])
    label: str = Field(examples=["ICT"])
    regions: list[str] = Field(
        description="Regions with a benchmark that can be published (enough observations).", examples=[["NL", "NL-UT"]]
    )


class RateSectorsOut(ResponseSchema):
    sectors: list[RateSectorOut]
    regions: list[str] = Field(description="Every region code accepted: `NL` and the twelve provinces.")
    min_sample: int = Field(description="Observations needed before a benchmark is published.", examples=[10])
    livemode: Livemode
