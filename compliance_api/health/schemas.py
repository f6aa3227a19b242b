from __future__ import annotations

from datetime import datetime

from pydantic import Field

from compliance_api.health.probe import HealthStatus
from compliance_api.kit.schemas import Livemode, ResponseSchema


class WttaCacheOut(ResponseSchema):
    imported_at: datetime | None = Field(
        description="When this environment's WTTA register cache was last refreshed (an import, or a check that "
        "found the register unchanged); null before the first.",
        examples=["2026-11-25T06:00:00Z"],
    )
    age_seconds: int | None = Field(
        description="Seconds since `imported_at`, as of the last background probe; null before the first refresh.",
        examples=[3600],
    )


class HealthOut(ResponseSchema):
    status: HealthStatus = Field(
        description="`ok`; `degraded` when Redis or the database is slow or failing, or (production) when the WTTA "
        "register cache is older than twice its scheduled refresh interval; `down` when the database cannot be "
        "reached."
    )
    region: str = Field(description="The region that answered.", examples=["eu-west"])
    version: str = Field(description="The service's software version.", examples=["0.1.0"])
    wtta: WttaCacheOut = Field(description="The age of the WTTA register cache of the caller's environment.")
    livemode: Livemode


class LiveOut(ResponseSchema):
    status: str = Field(examples=["ok"])


class ReadyCheck(ResponseSchema):
    reachable: bool
    latency_ms: float


class ReadyOut(ResponseSchema):
    status: HealthStatus
    database: ReadyCheck
    redis: ReadyCheck | None
