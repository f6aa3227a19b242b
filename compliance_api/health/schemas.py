from __future__ import annotations

from pydantic import Field

from compliance_api.health.probe import HealthStatus
from compliance_api.kit.schemas import ResponseSchema


class HealthOut(ResponseSchema):
    status: HealthStatus = Field(
        description="`ok`; `degraded` when Redis or the database is slow or failing; "
        "`down` when the database cannot be reached."
    )
    region: str = Field(description="The region that answered.", examples=["eu-west"])
    version: str = Field(description="The service's software version.", examples=["0.1.0"])


class LiveOut(ResponseSchema):
    status: str = Field(examples=["ok"])


class ReadyCheck(ResponseSchema):
    reachable: bool
    latency_ms: float


class ReadyOut(ResponseSchema):
    status: HealthStatus
    database: ReadyCheck
    redis: ReadyCheck | None
