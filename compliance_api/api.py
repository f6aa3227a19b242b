"""Every `/v1` router, in one list (the gateway authenticates all of them).

Routers carry their full prefix themselves (`APIRouter(prefix="/v1/...")`), so a route's path is its full template
in logs and metrics.
"""

from __future__ import annotations

from fastapi import APIRouter

from compliance_api.health.endpoints import router as health_router
from compliance_api.rates.endpoints import router as rates_router

API_ROUTERS: tuple[APIRouter, ...] = (health_router, rates_router)
