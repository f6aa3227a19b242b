"""`GET /v1/health` (authenticated) and the unauthenticated probes `/livez` and `/readyz`."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from compliance_api.config import settings_of
from compliance_api.health import views
from compliance_api.health.dependencies import probe_of
from compliance_api.health.probe import HealthStatus
from compliance_api.health.schemas import HealthOut, LiveOut, ReadyOut
from compliance_api.kit.clock import utcnow
from compliance_api.kit.strict_query import StrictQueryRoute

router = APIRouter(prefix="/v1", tags=["health"], route_class=StrictQueryRoute)
probes = APIRouter(tags=["operations"], include_in_schema=False)


@router.get(
    "/health",
    summary="Service health",
    operation_id="health-get",
    response_model=HealthOut,
    responses={503: {"model": HealthOut, "description": "The database cannot be reached (`status: down`)."}},
)
async def get_health(request: Request) -> HealthOut | Response:
    """The status of the service as last probed (every few seconds): `ok`, `degraded` or `down`."""
    probe = probe_of(request)
    cache = probe.wtta_age(request.state.environment, utcnow())
    status = HealthStatus.degraded if cache.stale and probe.status is HealthStatus.ok else probe.status
    health = views.health(status, settings_of(request).region, cache, request.state.environment)
    if health.status is HealthStatus.down:
        return Response(health.model_dump_json(), status_code=503, media_type="application/json")
    return health


@probes.get("/livez")
async def livez() -> LiveOut:
    """The process is up and serving."""
    return LiveOut(status="ok")


@probes.get("/readyz")
async def readyz(request: Request, response: Response) -> ReadyOut:
    """Checks the database and Redis now; 503 when the service cannot serve."""
    health = probe_of(request)
    status = await health.probe_once()
    if status is HealthStatus.down:
        response.status_code = 503
    return views.ready(status, health)
