"""`GET /v1/wtta/lookup` and `GET /v1/wtta/{kvk}/history`: reads of the caller's environment's cache."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.auth.caller import CurrentCaller
from compliance_api.db import DbSession
from compliance_api.errors import ApiError
from compliance_api.kit.environment import Environment
from compliance_api.wtta import service
from compliance_api.wtta.reader import sqlite_lookup_for
from compliance_api.wtta.schemas import StatusChangeOut, WttaAdmissionOut, WttaHistoryOut

router = APIRouter(prefix="/v1/wtta", tags=["wtta"])

KVK_PATTERN = r"^[0-9]{8}$"
NOT_IN_CACHE: dict[int | str, dict[str, Any]] = {
    404: {"description": "`not_in_cache`: the number is not in this environment's cache of the register."}
}


@router.get(
    "/lookup",
    summary="Look up a supplier's WTTA admission",
    operation_id="wtta-lookup",
    response_model=WttaAdmissionOut,
    responses=NOT_IN_CACHE,
)
async def lookup(
    request: Request,
    caller: CurrentCaller,
    kvk: Annotated[str, Query(pattern=KVK_PATTERN, description="KvK number, exactly 8 digits.")],
) -> Response:
    """The cached admission of the supplier with this KvK number (404 `not_in_cache` when unknown)."""
    services = request.app.state.services
    reader = sqlite_lookup_for(request.app.state, services.settings.resolved_database_url)
    row = reader.lookup(caller.environment, kvk) if reader is not None else None
    if reader is None or row is None:
        # No DbSession dependency: on SQLite a found number needs no session at all (the hot path).
        async with services.sessionmaker() as session:
            if reader is None:
                row = await service.lookup(session, environment=caller.environment, kvk_number=kvk)
            if row is None:
                raise await _not_in_cache(session, caller.environment, kvk)
    # Serialised here, once: returning the model would make FastAPI validate it a second time (hot path).
    return Response(WttaAdmissionOut.model_validate(row).model_dump_json(), media_type="application/json")


@router.get(
    "/{kvk}/history",
    summary="Status history of a supplier's WTTA admission",
    operation_id="wtta-history",
    response_model=WttaHistoryOut,
    responses=NOT_IN_CACHE,
)
async def status_history(
    caller: CurrentCaller,
    session: DbSession,
    kvk: Annotated[str, Path(pattern=KVK_PATTERN, description="KvK number, exactly 8 digits.")],
) -> WttaHistoryOut:
    """Every status change the cache recorded for this number, oldest first."""
    changes = await service.history(session, environment=caller.environment, kvk_number=kvk)
    if not changes:
        raise await _not_in_cache(session, caller.environment, kvk)
    return WttaHistoryOut(kvk_number=kvk, changes=[StatusChangeOut.model_validate(c) for c in changes])


async def _not_in_cache(session: AsyncSession, environment: Environment, kvk: str) -> ApiError:
    refreshed = await service.last_refreshed(session, environment=environment)
    when = f"last refreshed {refreshed.isoformat()}" if refreshed else "not yet imported"
    return ApiError(
        "not_in_cache",
        f"KvK number {kvk} is not in the {environment.label} cache of the WTTA register ({when}). "
        "The WTTA admission duty applies from 1 January 2027; before then a missing admission is not a breach.",
    )
