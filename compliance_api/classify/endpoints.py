"""`/v1/classify/...` and `/v1/classifications/{id}`: thin routes over the classify service."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import orjson
from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import BaseModel

from compliance_api.auth.caller import Caller
from compliance_api.auth.dependencies import CurrentCaller, caller_of
from compliance_api.auth.gateway import POLICY_HEADERS, rate_limit_headers
from compliance_api.classify import batch, examples, listing, service, views
from compliance_api.classify.answers import VerdictReferences
from compliance_api.classify.dependencies import rulesets_of
from compliance_api.classify.language import DEFAULT_LANGUAGE, VARY, Language, negotiate
from compliance_api.classify.models import ClassificationKind
from compliance_api.classify.questions import Test, questionnaire
from compliance_api.classify.ruleset import Rulesets
from compliance_api.classify.schemas import (
    BatchRequest,
    ClassificationList,
    ClassificationRecord,
    ClassificationUpdate,
    CriteriaCatalogue,
    CrossBorderBatchDryRun,
    CrossBorderBatchRequest,
    CrossBorderBatchResult,
    CrossBorderDryRunVerdict,
    CrossBorderRequest,
    CrossBorderVerdict,
    QuestionCatalogue,
    ZelfstandigenwetBatchDryRun,
    ZelfstandigenwetBatchRequest,
    ZelfstandigenwetBatchResult,
    ZelfstandigenwetRequest,
    ZWDryRunVerdict,
    ZWVerdict,
)
from compliance_api.classify.verdict import Country, Verdict
from compliance_api.classify.verdict_body import VerdictBody, unkept
from compliance_api.config import settings_of
from compliance_api.errors import ApiError, problem_base_url, request_id_of
from compliance_api.idempotency.dependencies import idempotency_of
from compliance_api.idempotency.service import IDEMPOTENCY_KEY_PARAMETER, fingerprint, key_of
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit, group_commit_of
from compliance_api.kit.page_query import PageQuery
from compliance_api.kit.pagination import cursor_page
from compliance_api.kit.schemas import IsoDateTime
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.ratelimit.dependencies import limiter_of
from compliance_api.sessions import DbSession, ReadSession, transaction

router = APIRouter(prefix="/v1", tags=["classify"], route_class=StrictQueryRoute)

IDEMPOTENCY_CONFLICT: dict[int | str, dict[str, Any]] = {
    409: {"description": "Idempotency-Key reused with another body, or still in progress."}
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "No such classification for this caller."}}


DryRun = Annotated[bool, Query(include_in_schema=False)]
"""`?dry_run=true` on a classify operation: the same as its `/dry-run` operation. Left out of the contract, where the
`/dry-run` operations describe the answer as a shape of its own: declared here, the kept operation's answer would
become a union in generated clients, and `id` no longer a plain UUID."""

BodyT = TypeVar("BodyT", bound=BaseModel)
Classifier = Callable[[GroupCommit, Caller, BodyT, Rulesets, dt.datetime, Language, str | None], Awaitable[VerdictBody]]
Answer = VerdictBody | dict[str, Any]
"""What a classify operation answers: one verdict, or a batch's `{"data": [...]}`."""

VERDICT_REFERENCES = VerdictReferences()
"""An Idempotency-Key record of a classify answer keeps the verdicts' ids, not their bytes."""

LANGUAGE_HEADERS = {language: {"Content-Language": language.code, "Vary": VARY} for language in Language}
"""The headers of an answer in each language, built once."""


def _language_of(request: Request) -> Language:
    return negotiate(request.headers.get("accept-language"))


def _in_language(response: Response, language: Language) -> Response:
    response.headers["Content-Language"] = language.code
    response.headers.add_vary_header(VARY)
    return response


def _fingerprinted_path(request: Request, language: Language) -> str:
    """What the idempotency fingerprint calls the path: a replay must be in the language the first answer was
    written in, so another language is another request. English keeps the plain path (the fingerprint of keys made
    before languages existed)."""
    path = request.url.path
    return path if language is DEFAULT_LANGUAGE else f"{path};language={language.code}"


async def _classify(request: Request, body: BodyT, classify: Classifier[BodyT]) -> Response:
    """Classify in the negotiated language, or with an Idempotency-Key replay the first verdict (no session is opened
    without a key).

    The hot path reads the caller and the headers itself: as FastAPI parameters they cost a fifth of the endpoint's
    time (bench/RESULTS.md); the headers are documented through `IDEMPOTENCY_KEY_PARAMETER` and
    `ACCEPT_LANGUAGE_PARAMETER`.
    """
    caller, language, request_id = caller_of(request), _language_of(request), request_id_of(request)
    audit, rulesets = group_commit_of(request), rulesets_of(request)

    def run() -> Awaitable[VerdictBody]:
        return classify(audit, caller, body, rulesets, utcnow(), language, request_id)

    return await _answer(request, body, language, run)


async def _answer(
    request: Request, body: BaseModel, language: Language, run: Callable[[], Awaitable[Answer]]
) -> Response:
    """`run`'s result in `language`; with an Idempotency-Key, once per key (a session is opened only then)."""
    key = key_of(request)
    if key is None:
        return Response(orjson.dumps(await run()), media_type="application/json", headers=LANGUAGE_HEADERS[language])
    async with transaction(request) as session:
        path = _fingerprinted_path(request, language)
        replayed = await idempotency_of(request).answer(
            caller_of(request), session, key, fingerprint("POST", path, body), run, compaction=VERDICT_REFERENCES
        )
    return _in_language(replayed, language)


def _dry_run(request: Request, body: BodyT, score: batch.Scorer[BodyT]) -> Response:
    """The verdict `body` would get, kept nowhere (an Idempotency-Key is not used: there is nothing to repeat)."""
    caller, language = caller_of(request), _language_of(request)
    scored = score(body, rulesets_of(request), utcnow(), language, caller.environment)
    return Response(
        orjson.dumps(unkept(scored.verdict)), media_type="application/json", headers=LANGUAGE_HEADERS[language]
    )


def _retention(request: Request) -> service.Retention:
    return service.Retention.of(settings_of(request))


@router.post(
    "/classify/zelfstandigenwet",
    summary="Score an engagement under the Dutch 5+4 test",
    operation_id="classify-zelfstandigenwet",
    response_model=ZWVerdict,
    openapi_extra={
        **examples.ZELFSTANDIGENWET,
        "parameters": [IDEMPOTENCY_KEY_PARAMETER, examples.ACCEPT_LANGUAGE_PARAMETER],
    },
    responses=IDEMPOTENCY_CONFLICT,
)
async def classify_zelfstandigenwet(
    body: ZelfstandigenwetRequest, request: Request, dry_run: DryRun = False
) -> Response:
    """Scores the engagement against the `nl-zw` ruleset (Zelfstandigenwet 5+4 criteria anchored in Deliveroo,
    with the hourly-rate presumption) and keeps the verdict as an audit record; the advice is in the language
    negotiated from `Accept-Language` (en, nl, fr or de; `Content-Language` says which). Honours Idempotency-Key.
    `POST /v1/classify/zelfstandigenwet/dry-run` answers the same without keeping anything."""
    if dry_run:
        return _dry_run(request, body, service.score_engagement)
    return await _classify(request, body, service.classify_engagement)


@router.post(
    "/classify/cross-border",
    summary="Score an engagement under the FR, DE or BE test",
    operation_id="classify-cross-border",
    response_model=CrossBorderVerdict,
    openapi_extra={
        **examples.CROSS_BORDER,
        "parameters": [IDEMPOTENCY_KEY_PARAMETER, examples.ACCEPT_LANGUAGE_PARAMETER],
    },
    responses=IDEMPOTENCY_CONFLICT,
)
async def classify_cross_border(body: CrossBorderRequest, request: Request, dry_run: DryRun = False) -> Response:
    """Scores the criteria against the country's ruleset; criteria left out count as false and are named in
    `advice`; an unknown name is a 400 listing the allowed ones. Advice and rule reasons are in the language
    negotiated from `Accept-Language` (en, nl, fr or de; `Content-Language` says which). Honours Idempotency-Key.
    `POST /v1/classify/cross-border/dry-run` answers the same without keeping anything."""
    if dry_run:
        return _dry_run(request, body, service.score_cross_border)
    return await _classify(request, body, service.classify_cross_border)


async def _charge(request: Request, items: int) -> None:
    """Take the rest of a batch's cost from the caller's bucket (the gateway took one token); the rate-limit
    headers then show what is left. Short of tokens: 429, and nothing is classified."""
    extra = batch.batch_cost(items) - 1
    if extra <= 0:
        return
    limiter, caller, state = limiter_of(request), caller_of(request), request.scope["state"]
    for _ in range(extra):
        decision = await limiter.consume(state["limiter_key"], caller.tier)
        state["response_headers"] = rate_limit_headers(decision, POLICY_HEADERS[caller.tier.name])
        if not decision.allowed:
            raise ApiError(
                "rate_limited",
                f"A batch of {items} items costs {batch.batch_cost(items)} requests; retry after `Retry-After` "
                "seconds or send smaller batches.",
            )


async def _classify_batch(
    request: Request, body: BatchRequest, model: type[BodyT], score: batch.Scorer[BodyT], dry_run: bool
) -> Response:
    await _charge(request, len(body.items))
    caller, language, rulesets = caller_of(request), _language_of(request), rulesets_of(request)
    base_url, request_id = problem_base_url(request), request_id_of(request)
    if dry_run:
        items = batch.BatchItems(caller, body.items, model, score, rulesets, utcnow(), language, base_url)
        answer = batch.dry_run_batch(items)
        return Response(orjson.dumps(answer), media_type="application/json", headers=LANGUAGE_HEADERS[language])

    def run() -> Awaitable[dict[str, Any]]:
        return batch.classify_batch(
            group_commit_of(request),
            caller,
            body.items,
            model,
            score,
            rulesets,
            utcnow(),
            language,
            base_url,
            request_id,
        )

    return await _answer(request, body, language, run)


@router.post(
    "/classify/zelfstandigenwet/batch",
    summary="Score up to 1000 engagements under the Dutch test",
    operation_id="classify-zelfstandigenwet-batch",
    response_model=ZelfstandigenwetBatchResult,
    openapi_extra={
        **examples.ZELFSTANDIGENWET_BATCH,
        "parameters": [IDEMPOTENCY_KEY_PARAMETER, examples.ACCEPT_LANGUAGE_PARAMETER],
    },
    responses={**IDEMPOTENCY_CONFLICT, **examples.BATCH_TOO_LARGE},
)
async def classify_zelfstandigenwet_batch(
    body: ZelfstandigenwetBatchRequest, request: Request, dry_run: DryRun = False
) -> Response:
    """Each item is a `POST /v1/classify/zelfstandigenwet` body; the answer has each item's verdict (kept as an
    audit record, like a single call) or its own problem naming the item's `index` and fields, in the order sent.
    One bad item does not fail the others. A batch costs one request per started 100 items against the rate limit;
    honours Idempotency-Key. The body may be at most 1 MiB: a larger one is refused whole (413 `payload_too_large`),
    so split a batch of large items into several requests. `POST /v1/classify/zelfstandigenwet/batch/dry-run` answers
    the same without keeping anything."""
    return await _classify_batch(request, body, ZelfstandigenwetRequest, service.score_engagement, dry_run)


@router.post(
    "/classify/cross-border/batch",
    summary="Score up to 1000 engagements under the FR, DE or BE test",
    operation_id="classify-cross-border-batch",
    response_model=CrossBorderBatchResult,
    openapi_extra={
        **examples.CROSS_BORDER_BATCH,
        "parameters": [IDEMPOTENCY_KEY_PARAMETER, examples.ACCEPT_LANGUAGE_PARAMETER],
    },
    responses={**IDEMPOTENCY_CONFLICT, **examples.BATCH_TOO_LARGE},
)
async def classify_cross_border_batch(
    body: CrossBorderBatchRequest, request: Request, dry_run: DryRun = False
) -> Response:
    """Each item is a `POST /v1/classify/cross-border` body (countries may differ); otherwise as the Dutch batch. The
    body may be at most 1 MiB: a larger one is refused whole (413 `payload_too_large`), so split a batch of large
    items into several requests. `POST /v1/classify/cross-border/batch/dry-run` answers the same without keeping
    anything."""
    return await _classify_batch(request, body, CrossBorderRequest, service.score_cross_border, dry_run)


DRY_RUN_DESCRIPTION = """

A dry run: the verdict the same request to the kept operation would get, with `id` null and nothing kept (no audit
record, no `classification.created` event, no dossier, nothing listed). For questionnaire loops that ask "what if" at
every answer. It costs rate limit like the kept operation; an Idempotency-Key is not needed and not used. (The kept
operation with `?dry_run=true` answers the same.)"""


@router.post(
    "/classify/zelfstandigenwet/dry-run",
    summary="Score an engagement under the Dutch test without keeping the verdict",
    operation_id="classify-zelfstandigenwet-dry-run",
    response_model=ZWDryRunVerdict,
    openapi_extra={**examples.ZELFSTANDIGENWET_DRY_RUN, "parameters": [examples.ACCEPT_LANGUAGE_PARAMETER]},
    description="Scores the engagement against the `nl-zw` ruleset, as `POST /v1/classify/zelfstandigenwet` does."
    + DRY_RUN_DESCRIPTION,
)
async def dry_run_zelfstandigenwet(body: ZelfstandigenwetRequest, request: Request) -> Response:
    return _dry_run(request, body, service.score_engagement)


@router.post(
    "/classify/cross-border/dry-run",
    summary="Score an engagement under the FR, DE or BE test without keeping the verdict",
    operation_id="classify-cross-border-dry-run",
    response_model=CrossBorderDryRunVerdict,
    openapi_extra={**examples.CROSS_BORDER_DRY_RUN, "parameters": [examples.ACCEPT_LANGUAGE_PARAMETER]},
    description="Scores the criteria against the country's ruleset, as `POST /v1/classify/cross-border` does."
    + DRY_RUN_DESCRIPTION,
)
async def dry_run_cross_border(body: CrossBorderRequest, request: Request) -> Response:
    return _dry_run(request, body, service.score_cross_border)


@router.post(
    "/classify/zelfstandigenwet/batch/dry-run",
    summary="Score up to 1000 engagements under the Dutch test without keeping the verdicts",
    operation_id="classify-zelfstandigenwet-batch-dry-run",
    response_model=ZelfstandigenwetBatchDryRun,
    openapi_extra={**examples.ZELFSTANDIGENWET_BATCH_DRY_RUN, "parameters": [examples.ACCEPT_LANGUAGE_PARAMETER]},
    responses=examples.BATCH_TOO_LARGE,
    description="Each item is a `POST /v1/classify/zelfstandigenwet` body, answered as that operation's batch answers "
    "it, at the same cost (one request per started 100 items)." + DRY_RUN_DESCRIPTION,
)
async def dry_run_zelfstandigenwet_batch(body: ZelfstandigenwetBatchRequest, request: Request) -> Response:
    return await _classify_batch(request, body, ZelfstandigenwetRequest, service.score_engagement, dry_run=True)


@router.post(
    "/classify/cross-border/batch/dry-run",
    summary="Score up to 1000 engagements under the FR, DE or BE test without keeping the verdicts",
    operation_id="classify-cross-border-batch-dry-run",
    response_model=CrossBorderBatchDryRun,
    openapi_extra={**examples.CROSS_BORDER_BATCH_DRY_RUN, "parameters": [examples.ACCEPT_LANGUAGE_PARAMETER]},
    responses=examples.BATCH_TOO_LARGE,
    description="Each item is a `POST /v1/classify/cross-border` body, answered as that operation's batch answers it, "
    "at the same cost (one request per started 100 items)." + DRY_RUN_DESCRIPTION,
)
async def dry_run_cross_border_batch(body: CrossBorderBatchRequest, request: Request) -> Response:
    return await _classify_batch(request, body, CrossBorderRequest, service.score_cross_border, dry_run=True)


@router.get(
    "/classify/cross-border/criteria",
    summary="The criteria catalogue of a country's test",
    operation_id="classify-cross-border-criteria",
    response_model=CriteriaCatalogue,
    openapi_extra={**examples.CRITERIA, "parameters": [examples.ACCEPT_LANGUAGE_PARAMETER]},
)
async def cross_border_criteria(
    country: Annotated[Country, Query(description="FR, DE or BE.", examples=["BE"])],
    request: Request,
    response: Response,
) -> CriteriaCatalogue:
    """Each criterion's name, description, weight and legal basis, the scoring rules and the dated tariefgrens;
    descriptions and rule reasons in the language negotiated from `Accept-Language`."""
    language = _language_of(request)
    _in_language(response, language)
    livemode = caller_of(request).environment is Environment.live
    return views.criteria_catalogue(rulesets_of(request).cross_border[country], language, livemode=livemode)


@router.get(
    "/classify/questions",
    summary="The questions of a test, and the facts that decide it",
    operation_id="classify-questions",
    response_model=QuestionCatalogue,
    openapi_extra={**examples.QUESTIONS, "parameters": [examples.ACCEPT_LANGUAGE_PARAMETER]},
)
async def questions(
    test: Annotated[
        Test, Query(description="NL (the Dutch test), or FR, DE or BE (a cross-border test).", examples=["NL"])
    ],
    request: Request,
    response: Response,
) -> QuestionCatalogue:
    """Every input of the test as a question to answer (yes or no, or a number), with a plain-language explanation
    and its legal source, in the ruleset's order; and the decisive rules: the facts that are enough for `unsafe` or
    `safe`. Questions and reasons in the language negotiated from `Accept-Language`."""
    language = _language_of(request)
    _in_language(response, language)
    livemode = caller_of(request).environment is Environment.live
    return views.question_catalogue(questionnaire(rulesets_of(request), test, language), language, livemode=livemode)


@router.get(
    "/classifications",
    summary="Your classifications, newest first",
    operation_id="classification-list",
    response_model=ClassificationList,
    openapi_extra=examples.CLASSIFICATION_LIST,
)
async def list_classifications(
    caller: CurrentCaller,
    session: ReadSession,
    request: Request,
    paging: PageQuery,
    reference: Annotated[
        str | None,
        Query(min_length=1, max_length=200, description="Your `reference`.", examples=["contract-2026-0042"]),
    ] = None,
    verdict: Annotated[Verdict | None, Query(description="The current verdict.", examples=["risky"])] = None,
    kind: Annotated[
        ClassificationKind | None, Query(description="The Dutch or the cross-border test.", examples=["cross_border"])
    ] = None,
    country: Annotated[Country | None, Query(description="The cross-border test's country.", examples=["DE"])] = None,
    monitored: Annotated[
        bool | None, Query(description="Only monitored (true) or unmonitored (false) ones.", examples=[True])
    ] = None,
    created_after: Annotated[
        IsoDateTime | None, Query(description="ISO 8601 with a time zone.", examples=["2026-11-01T00:00:00Z"])
    ] = None,
    created_before: Annotated[
        IsoDateTime | None, Query(description="ISO 8601 with a time zone.", examples=["2026-12-01T00:00:00Z"])
    ] = None,
) -> ClassificationList:
    """The classifications this account made in this environment (within retention), filtered; another account or
    the other environment sees none of them. Pages with `limit` and `cursor`."""
    filters = listing.ClassificationFilter(reference, verdict, kind, country, monitored, created_after, created_before)
    now = utcnow()
    since = _retention(request).cutoff(caller.environment, now)
    page = await listing.list_classifications(
        session, caller, filters, limit=paging.limit, cursor=paging.cursor, cursors=paging.cursors, since=since
    )
    return cursor_page(ClassificationList, page, views.classification_summary)


@router.get(
    "/classifications/{classification_id}",
    summary="A stored verdict (audit trail)",
    operation_id="classification-get",
    response_model=ClassificationRecord,
    responses=NOT_FOUND,
    openapi_extra=examples.CLASSIFICATION,
)
async def get_classification(
    classification_id: Annotated[uuid.UUID, Path(examples=["0f8fad5b-d9cb-469f-a165-70867728950e"])],
    caller: CurrentCaller,
    session: DbSession,
    request: Request,
) -> ClassificationRecord:
    """The verdict with its input and ruleset version, for the account that asked for it, in the same
    environment, while retention lasts; anyone else gets 404."""
    found = await service.get_classification(session, caller, classification_id, _retention(request), utcnow())
    return views.classification_record(found)


@router.patch(
    "/classifications/{classification_id}",
    summary="Switch law-change monitoring of a classification",
    operation_id="classification-update",
    response_model=ClassificationRecord,
    responses=NOT_FOUND,
    openapi_extra=examples.CLASSIFICATION_UPDATE,
)
async def update_classification(
    classification_id: Annotated[uuid.UUID, Path(examples=["0f8fad5b-d9cb-469f-a165-70867728950e"])],
    body: ClassificationUpdate,
    caller: CurrentCaller,
    session: DbSession,
    request: Request,
) -> ClassificationRecord:
    """`{"monitor": false}` stops re-scoring (and `classification.verdict_changed` events) for this classification;
    `true` starts it. Only the account that asked for it, in the same environment; anyone else gets 404."""
    retention, now = _retention(request), utcnow()
    found = await service.set_monitoring(session, caller, classification_id, body.monitor, retention, now)
    return views.classification_record(found)
