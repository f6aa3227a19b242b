"""`/v1/passport...` (and `/api/v1/passport`): thin routes over the passport service; the JWKS outside `/v1`."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Request
from fastapi.responses import JSONResponse, Response

from compliance_api.auth.dependencies import CurrentCaller, caller_of, peppers_of
from compliance_api.idempotency.dependencies import idempotency_of
from compliance_api.idempotency.service import IdempotencyKey, fingerprint
from compliance_api.kit.clock import utcnow
from compliance_api.kit.group_commit import group_commit_of
from compliance_api.kit.page_query import PageQuery
from compliance_api.kit.pagination import cursor_page
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.passport import certificates, service, views
from compliance_api.passport.catalogue import packaged_catalogue
from compliance_api.passport.dependencies import hot_path_of, signing_keys_of
from compliance_api.passport.schemas import (
    OwnPassport,
    PassportSummary,
    Share,
    ShareCreate,
    ShareCreated,
    ShareList,
    ShareViewList,
)
from compliance_api.sessions import DbSession, transaction

router = APIRouter(tags=["passport"], route_class=StrictQueryRoute)
# The two hot routes on a router of their own, tried right after the WTTA lookup: FastAPI tries every route before
# the one that matches, twice (about 1.5 µs each), and verify was the 27th try (bench/RESULTS.md).
hot_router = APIRouter(tags=["passport"], route_class=StrictQueryRoute)
jwks_router = APIRouter(include_in_schema=False)

FREELANCER_ONLY: dict[int | str, dict[str, Any]] = {
    403: {"description": "`freelancer_only`: the token is not a freelancer's."}
}
OWN: dict[int | str, dict[str, Any]] = {
    **FREELANCER_ONLY,
    404: {"description": "`no_passport`: this freelancer has no passport in this environment."},
}
SHARE: dict[int | str, dict[str, Any]] = {
    **FREELANCER_ONLY,
    404: {"description": "`no_passport`, or `share_not_found`: no share with this id of this freelancer here."},
}
SHARE_ID = Annotated[uuid.UUID, Path(examples=["6f1c1a52-4c1e-4b8e-9d3e-2f7a4f0b9c11"])]


# The hot routes read the caller from the request and answer serialised bodies: as FastAPI dependencies and a
# returned model (validated a second time) they cost more than the read itself (bench/RESULTS.md).


async def _own_passport(request: Request) -> Response:
    """The caller's own passport (a freelancer's token): score, level, sector, verified, last update."""
    hot = hot_path_of(request)
    rows = await service.own_passport_rows(hot.reader, caller_of(request))
    body = views.own_passport_body(rows, packaged_catalogue(), utcnow().date(), hot.own)
    return Response(body, media_type="application/json")


hot_router.get(
    "/v1/passport",
    summary="Your own passport",
    operation_id="passport-get",
    response_model=OwnPassport,
    responses=OWN,
)(_own_passport)
hot_router.get(
    "/api/v1/passport",
    summary="Your own passport (alternative path)",
    operation_id="passport-get-api",
    response_model=OwnPassport,
    responses=OWN,
)(_own_passport)


@router.post(
    "/v1/passport/shares",
    summary="Create a share-token",
    operation_id="passport-share-create",
    status_code=201,
    response_model=ShareCreated,
    responses={
        **OWN,
        409: {
            "description": "`idempotency_mismatch`: Idempotency-Key reused with another body; "
            "`idempotency_in_progress`: still running."
        },
    },
)
async def create_share(
    caller: CurrentCaller,
    session: DbSession,
    request: Request,
    idempotency_key: IdempotencyKey = None,
    body: Annotated[ShareCreate | None, Body()] = None,
) -> Response:
    """A new share-token for your passport, shown once, valid `ttl_days` (default 30); honours Idempotency-Key."""
    wanted = body or ShareCreate()
    pepper, _ = peppers_of(request)

    async def create() -> ShareCreated:
        now = utcnow()
        created = await service.create_share(session, caller, ttl_days=wanted.ttl_days, pepper=pepper, now=now)
        return views.share_created(created, now)

    fingerprinted = fingerprint("POST", request.url.path, wanted)
    return await idempotency_of(request).answer(
        caller, session, idempotency_key, fingerprinted, create, status_code=201
    )


@router.get(
    "/v1/passport/shares",
    summary="Your share-tokens",
    operation_id="passport-share-list",
    response_model=ShareList,
    responses=OWN,
)
async def list_shares(
    caller: CurrentCaller,
    session: DbSession,
    paging: PageQuery,
) -> ShareList:
    """The share-tokens of your passport, newest first, with their status (the tokens themselves are not kept)."""
    page = await service.list_shares(session, caller, limit=paging.limit, cursor=paging.cursor, cursors=paging.cursors)
    now = utcnow()
    return cursor_page(ShareList, page, lambda share: views.share(share, now))


@router.delete(
    "/v1/passport/shares/{share_id}",
    summary="Revoke a share-token",
    operation_id="passport-share-revoke",
    response_model=Share,
    responses=SHARE,
)
async def revoke_share(share_id: SHARE_ID, caller: CurrentCaller, session: DbSession) -> Share:
    """Revoke at once: the token then answers 404 like an unknown one. Revoking twice is harmless."""
    now = utcnow()
    return views.share(await service.revoke_share(session, caller, share_id, now), now)


@router.get(
    "/v1/passport/shares/{share_id}/views",
    summary="Who verified a share-token",
    operation_id="passport-share-views",
    response_model=ShareViewList,
    responses=SHARE,
)
async def list_views(
    share_id: SHARE_ID,
    caller: CurrentCaller,
    session: DbSession,
    paging: PageQuery,
) -> ShareViewList:
    """The successful verifications of this share-token, newest first: the verifier's account and when."""
    page = await service.list_views(
        session, caller, share_id, limit=paging.limit, cursor=paging.cursor, cursors=paging.cursors
    )
    return cursor_page(ShareViewList, page, views.viewing)


@hot_router.get(
    "/v1/passport/{token}/verify",
    summary="Verify a passport through a share-token",
    operation_id="passport-verify",
    response_model=PassportSummary,
    responses={404: {"description": "`share_not_found`: unknown, expired and revoked tokens alike."}},
)
async def verify(token: Annotated[str, Path(examples=["pst_example"])], request: Request) -> Response:
    """The passport summary signed as a compact JWS (EdDSA, `kid`); any account may verify, and each
    verification is recorded for the freelancer to see."""
    hot, audit, caller = hot_path_of(request), group_commit_of(request), caller_of(request)
    pepper, previous_pepper = peppers_of(request)
    now = utcnow()
    try:
        verified = await service.verify_share(
            hot.reader, audit, caller, token, pepper=pepper, previous_pepper=previous_pepper, now=now
        )
    except service.SharedUnderRetiredSecret as found:  # rare (a secret rotation): re-hashed, then verified as usual
        async with transaction(request) as session:
            await service.rehash_share(session, found.share_id, token, pepper=pepper, previous_pepper=previous_pepper)
        verified = await service.verify_share(
            hot.reader, audit, caller, token, pepper=pepper, previous_pepper=previous_pepper, now=now
        )
    body = views.signed_summary_body(verified, packaged_catalogue(), signing_keys_of(request), hot.summaries)
    return Response(body, media_type="application/json")


@jwks_router.get("/.well-known/jwks.json")
async def jwks(request: Request) -> JSONResponse:
    """The public passport signing keys of this host's environment (production or sandbox), old ones included."""
    document = signing_keys_of(request).jwks(request.scope["state"]["environment"])
    return JSONResponse(
        document, media_type="application/jwk-set+json", headers={"Cache-Control": "public, max-age=300"}
    )


@jwks_router.get("/.well-known/dossier-certificates.pem")
async def dossier_certificates(request: Request) -> Response:
    """The certificates that sign this host's environment's dossier PDFs, old ones included, oldest first: PEM, each
    after a line naming it and its SHA-256 fingerprint (text a PEM reader skips)."""
    environment = request.scope["state"]["environment"]
    body = certificates.published_pem(signing_keys_of(request).pdf_certificates(environment))
    return Response(body, media_type="application/x-pem-file", headers={"Cache-Control": "public, max-age=300"})
