"""`/v1/dac7/...`: thin routes over the DAC7 service (snapshot reads, the seller's read grants)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from compliance_api.auth.dependencies import CurrentCaller
from compliance_api.config import settings_of
from compliance_api.dac7 import service, views
from compliance_api.dac7.identity import SellerIdentity
from compliance_api.dac7.schemas import Dac7IdentityOut, Dac7SellerOut, Grant, GrantCreate, GrantList
from compliance_api.dac7.sealing import identity_box
from compliance_api.idempotency.dependencies import idempotency_of
from compliance_api.idempotency.service import IdempotencyKey, fingerprint
from compliance_api.kit.clock import utcnow
from compliance_api.kit.page_query import PageQuery
from compliance_api.kit.pagination import cursor_page
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.sessions import DbSession

router = APIRouter(tags=["dac7"], route_class=StrictQueryRoute)

UUID_EXAMPLE = "6f1c1a52-4c1e-4b8e-9d3e-2f7a4f0b9c11"
FREELANCER_ID = Annotated[uuid.UUID, Path(description="The seller's user id.", examples=[UUID_EXAMPLE])]
GRANT_ID = Annotated[uuid.UUID, Path(examples=[UUID_EXAMPLE])]
SELLER_ONLY: dict[int | str, dict[str, Any]] = {403: {"description": "`seller_only`: the token is not a freelancer's."}}


@router.get(
    "/v1/dac7/seller/{freelancer_id}",
    summary="A seller's DAC7 snapshot for the current year",
    operation_id="dac7-seller-get",
    response_model=Dac7SellerOut,
    responses={
        403: {
            "description": "`forbidden`: you are neither this seller nor hold its grant, or there is no such seller "
            "in this environment (the same answer, so it does not reveal which)."
        }
    },
)
async def get_seller(
    freelancer_id: FREELANCER_ID, caller: CurrentCaller, session: DbSession, request: Request
) -> Dac7SellerOut:
    """The seller's figures for the current calendar year (UTC): net consideration, number of activities, `reported_at`.
    Readable by the seller itself and by holders of its grant, in the same environment."""
    box = identity_box(settings_of(request))
    return views.seller(await service.snapshot(session, caller, freelancer_id, utcnow(), box))


IDENTITY_FORBIDDEN: dict[int | str, dict[str, Any]] = {
    403: {
        "description": "`forbidden`: you are neither this seller nor hold its grant (for a write: not this seller's "
        "own account), or there is no such seller in this environment (the same answer, so it does not reveal which)."
    }
}


@router.get(
    "/v1/dac7/seller/{freelancer_id}/identity",
    summary="What is held about a seller for DAC7",
    operation_id="dac7-identity-get",
    response_model=Dac7IdentityOut,
    responses=IDENTITY_FORBIDDEN,
)
async def get_identity(
    freelancer_id: FREELANCER_ID, caller: CurrentCaller, session: DbSession, request: Request
) -> Dac7IdentityOut:
    """The seller's DAC7 identity in this environment (name, address, TINs, VAT, date and place of birth, IBAN…),
    with what a report still lacks. Readable by the seller itself and holders of its grant, read from the database
    on every call (never cached)."""
    seller, held = await service.read_identity(session, caller, freelancer_id, identity_box(settings_of(request)))
    return views.identity(seller, held)


@router.put(
    "/v1/dac7/seller/{freelancer_id}/identity",
    summary="Set a seller's DAC7 identity",
    operation_id="dac7-identity-put",
    response_model=Dac7IdentityOut,
    responses={**IDENTITY_FORBIDDEN, 400: {"description": "`validation_failed`: the field at fault is named."}},
)
async def put_identity(
    freelancer_id: FREELANCER_ID,
    body: SellerIdentity,
    caller: CurrentCaller,
    session: DbSession,
    request: Request,
) -> Dac7IdentityOut:
    """Replace the seller's whole DAC7 identity in this environment, with the seller's own account's token. Every
    field is checked (TINs per member state, VAT numbers and IBANs with python-stdnum, ISO countries) and the
    identity must be complete for its kind; on any problem nothing is written. Stored encrypted."""
    box = identity_box(settings_of(request))
    seller = await service.put_identity(session, caller, freelancer_id, body, box, utcnow())
    return views.identity(seller, body)


@router.post(
    "/v1/dac7/grants",
    summary="Let another account read your DAC7 snapshot",
    operation_id="dac7-grant-create",
    status_code=201,
    response_model=Grant,
    responses={
        **SELLER_ONLY,
        404: {"description": "`grantee_not_found`: no user with this id."},
        409: {"description": "Idempotency-Key reused with another body, or still in progress."},
    },
)
async def create_grant(
    body: GrantCreate,
    caller: CurrentCaller,
    session: DbSession,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Grant the user `grantee_id` read access to your snapshot in this environment until you revoke it;
    granting an active grantee again returns the active grant. Honours Idempotency-Key."""

    async def create() -> Grant:
        return views.grant(await service.create_grant(session, caller, body.grantee_uuid, utcnow()))

    fingerprinted = fingerprint("POST", request.url.path, body)
    return await idempotency_of(request).answer(
        caller, session, idempotency_key, fingerprinted, create, status_code=201
    )


@router.get(
    "/v1/dac7/grants",
    summary="Your DAC7 read grants",
    operation_id="dac7-grant-list",
    response_model=GrantList,
    responses=SELLER_ONLY,
)
async def list_grants(
    caller: CurrentCaller,
    session: DbSession,
    paging: PageQuery,
) -> GrantList:
    """The grants you gave in this environment, active and revoked, newest first."""
    page = await service.page_of_grants(
        session, caller, limit=paging.limit, cursor=paging.cursor, cursors=paging.cursors
    )
    return cursor_page(GrantList, page, views.grant)


@router.delete(
    "/v1/dac7/grants/{grant_id}",
    summary="Revoke a DAC7 read grant",
    operation_id="dac7-grant-revoke",
    response_model=Grant,
    responses={**SELLER_ONLY, 404: {"description": "`grant_not_found`: you gave no grant with this id here."}},
)
async def revoke_grant(grant_id: GRANT_ID, caller: CurrentCaller, session: DbSession) -> Grant:
    """Revoke at once: the grantee's next read is 403. Revoking twice is harmless."""
    return views.grant(await service.revoke_grant(session, caller, grant_id, utcnow()))
