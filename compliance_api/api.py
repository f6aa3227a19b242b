"""Every `/v1` router, in one list (the gateway authenticates all of them).

Routers carry their full prefix themselves (`APIRouter(prefix="/v1/...")`), so a route's path is its full template
in logs and metrics.
"""

from __future__ import annotations

from fastapi import APIRouter

from compliance_api.classify.endpoints import router as classify_router
from compliance_api.dac7.endpoints import router as dac7_router
from compliance_api.dossier.endpoints import router as dossier_router
from compliance_api.events.endpoints import router as events_router
from compliance_api.health.endpoints import router as health_router
from compliance_api.passport.endpoints import hot_router as passport_hot_router
from compliance_api.passport.endpoints import router as passport_router
from compliance_api.rates.endpoints import router as rates_router
from compliance_api.requestlog.endpoints import router as requests_router
from compliance_api.webhooks.endpoints import router as webhooks_router
from compliance_api.wtta.endpoints import router as wtta_router

# Starlette tries routes in order: the hottest reads (the WTTA lookup, then a passport's verification and its
# owner's read) come right after the health check.
API_ROUTERS: tuple[APIRouter, ...] = (
    health_router,
    wtta_router,
    passport_hot_router,
    classify_router,
    dossier_router,
    rates_router,
    passport_router,
    dac7_router,
    webhooks_router,
    events_router,
    requests_router,
)
