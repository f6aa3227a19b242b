"""`GET /v1/classifications/{id}/dossier`: the signed dossier of a classification, as JSON or as a PDF."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

import anyio
import mimeparse  # type: ignore[import-untyped]
import orjson
from fastapi import APIRouter, Path, Query, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.types import Receive, Scope, Send

from compliance_api.auth.caller import Actor
from compliance_api.auth.dependencies import CurrentCaller
from compliance_api.classify.dependencies import rulesets_of
from compliance_api.classify.service import Retention
from compliance_api.config import bases_of, settings_of
from compliance_api.dossier import examples
from compliance_api.dossier.document import Signers, build_dossier, certificates_url, jwks_url, sign
from compliance_api.dossier.render import dossier_pdf
from compliance_api.dossier.schemas import Dossier, SignedDossier
from compliance_api.dossier.service import dossier_facts
from compliance_api.errors import ApiError
from compliance_api.kit.clock import utcnow
from compliance_api.kit.fair_limiter import FairLimiter
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.passport.certificates import PdfSigningKey
from compliance_api.passport.dependencies import signing_keys_of
from compliance_api.sessions import DbSession

router = APIRouter(prefix="/v1", tags=["classify"], route_class=StrictQueryRoute)

PDF, JSON = "application/pdf", "application/json"
FORMATS = {"pdf": PDF, "json": JSON}
OFFERED = [PDF, JSON]  # on a tie (`*/*`, no Accept) the last one wins: JSON, like every other answer
RENDERING: FairLimiter[uuid.UUID] = FairLimiter(1)
"""One PDF at a time per process, in a worker thread: a render is CPU work (tens of milliseconds), and a burst of
PDF requests must not take every CPU from the process's other requests. Typst compiles without holding the GIL, so
the event loop keeps answering meanwhile; each thread has its own compiler (see `render.Typesetter`). The accounts
waiting take turns: one account's burst holds another's PDF for at most one render (bench/dossier.py `fairness`)."""

RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The signed dossier: JSON (`SignedDossier`), or the PDF an auditor reads, which carries the "
        "same JWS as the attached file `dossier.jws`.",
        "content": {
            PDF: {
                "schema": {"type": "string", "contentMediaType": PDF},
                "example": "%PDF-1.7 … (binary)",
            }
        },
        "headers": {
            "Content-Disposition": {
                "description": 'PDF only: `attachment; filename="dossier-<id>.pdf"`.',
                "schema": {"type": "string"},
            }
        },
    },
    404: {"description": "No such classification for this caller."},
    406: {"description": "`not_acceptable`: `Accept` names neither `application/json` nor `application/pdf`."},
}


def _media_type(request: Request, format: str | None) -> str:
    """`format` if given, else the best of PDF and JSON for `Accept` (none, `*/*` or an unreadable one: JSON)."""
    if format is not None:
        return FORMATS[format]
    accept = request.headers.get("accept", "").strip() or "*/*"
    try:
        chosen: str = mimeparse.best_match(OFFERED, accept)
    except ValueError:  # a malformed Accept says nothing we can follow; answer as if it were absent
        return JSON
    if not chosen:
        raise ApiError(
            "not_acceptable",
            f"This operation answers `{JSON}` or `{PDF}` (or `?format=json|pdf`); `Accept` allows neither.",
        )
    return chosen


async def render_pdf(dossier: Dossier, jws: str, key: PdfSigningKey, account: uuid.UUID) -> bytes:
    """The dossier's PDF signed with `key`, rendered in a worker thread, one at a time, accounts in turn (see
    `RENDERING`)."""
    async with RENDERING.slot(account):
        return await anyio.to_thread.run_sync(dossier_pdf, dossier, jws, key)


@router.get(
    "/classifications/{classification_id}/dossier",
    summary="The signed dossier of a classification (JSON or PDF)",
    operation_id="classification-dossier",
    response_model=SignedDossier,
    responses=RESPONSES,
    openapi_extra=examples.DOSSIER_OPERATION,
)
async def classification_dossier(
    classification_id: Annotated[uuid.UUID, Path(examples=["0f8fad5b-d9cb-469f-a165-70867728950e"])],
    caller: CurrentCaller,
    session: DbSession,
    request: Request,
    format: Annotated[
        Literal["pdf", "json"] | None,
        Query(description="Overrides `Accept`: `pdf` or `json` (handy in links and downloads).", examples=["pdf"]),
    ] = None,
) -> Response:
    """What an auditor needs about one verdict: the engagement's reference and metadata, every question of the test
    with its answer (or not answered), the verdict, each criterion's finding with its legal source, the ruleset
    version and the threshold in force, the re-scores, who asked (account, token or dashboard user), when, and the
    request id. Signed as a compact JWS (EdDSA) with the environment's passport signing key, verifiable offline
    against `/.well-known/jwks.json` of the same host. `Accept: application/pdf` (or `?format=pdf`) answers the PDF,
    in the classification's language, carrying the same JWS; otherwise JSON. Only the account that asked for it, in
    the same environment, while retention lasts; anyone else gets 404."""
    return await dossier_response(request, session, caller, classification_id, _media_type(request, format))


async def dossier_response(
    request: Request, session: AsyncSession, actor: Actor, classification_id: uuid.UUID, media_type: str
) -> Response:
    """The actor's dossier as `media_type` (PDF or JSON), signed now, read with `session` (the request's own: a
    second one would hold two connections at once); ApiError `not_found` for anyone else's. The PDF is rendered only
    when the response is sent, after the request's session is closed, so no connection waits for the renderer."""
    keys, now = signing_keys_of(request), utcnow()
    facts = await dossier_facts(session, actor, classification_id, Retention.of(settings_of(request)), now)
    key = keys.signing_key(actor.environment)
    pdf_key = keys.pdf_signer(actor.environment)
    bases = bases_of(request)
    signers = Signers(
        kid=str(key.kid),
        jwks_url=jwks_url(bases, actor.environment),
        certificates_url=certificates_url(bases, actor.environment),
        certificate_sha256=pdf_key.fingerprint,
    )
    dossier = build_dossier(facts, rulesets_of(request), signers=signers, issued_at=now)
    jws = sign(dossier, key)
    headers = {"Vary": "Accept", "Cache-Control": "private, no-store"}
    if media_type == PDF:
        headers["Content-Disposition"] = f'attachment; filename="dossier-{classification_id}.pdf"'
        return RenderedPdf(dossier, jws, pdf_key, actor.user_id, headers)
    body = {"dossier": dossier.model_dump(mode="json"), "jws": jws}
    return Response(orjson.dumps(body), media_type=JSON, headers=headers)


class RenderedPdf(Response):
    """A dossier's PDF, rendered when the response is sent (see `render_pdf`): by then the request's session has
    committed and given its connection back."""

    media_type = PDF

    def __init__(
        self, dossier: Dossier, jws: str, key: PdfSigningKey, account: uuid.UUID, headers: dict[str, str]
    ) -> None:
        super().__init__(headers=headers)
        self.dossier, self.jws, self.key, self.account, self.given_headers = dossier, jws, key, account, headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.body = await render_pdf(self.dossier, self.jws, self.key, self.account)
        self.init_headers(self.given_headers)
        await super().__call__(scope, receive, send)
