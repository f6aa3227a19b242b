"""`/freelancer/classifications`: the signed-in user's verdicts in one environment, with the filters and pages of
`GET /v1/classifications` (the same listing function), and a page per verdict with its explanation and the history
of its re-scores (the record `GET /v1/classifications/{id}` answers)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from compliance_api.classify import listing
from compliance_api.classify import service as classify_service
from compliance_api.classify import views as classify_views
from compliance_api.classify.dependencies import rulesets_of
from compliance_api.classify.language import CODES
from compliance_api.classify.models import ClassificationKind
from compliance_api.classify.rescore import causes
from compliance_api.classify.ruleset import Rulesets
from compliance_api.classify.schemas import ClassificationRecord, CrossBorderVerdict, LaterVerdict
from compliance_api.classify.verdict import Country, Verdict
from compliance_api.dashboard import query, throttle
from compliance_api.dashboard.classification import OwnClassification
from compliance_api.dashboard.i18n import N_, text
from compliance_api.dashboard.nav import DashboardPage, NavItem
from compliance_api.dashboard.service import Acting
from compliance_api.dashboard.web import CurrentAccount, not_found, render, state_of, throttled, translator_of
from compliance_api.dossier.endpoints import PDF, dossier_response
from compliance_api.errors import ApiError
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.invalid import InvalidFields
from compliance_api.kit.pagination import DEFAULT_LIMIT, cursors_of
from compliance_api.sessions import DbSession

router = APIRouter()
PATH = "/classifications"
TESTS: dict[str, tuple[str, ClassificationKind, Country | None]] = {
    "zelfstandigenwet": (N_("Dutch test (Zelfstandigenwet)"), ClassificationKind.zelfstandigenwet, None),
    "cross_border": (N_("Any cross-border test"), ClassificationKind.cross_border, None),
    Country.FR.value: (N_("Cross-border: France"), ClassificationKind.cross_border, Country.FR),
    Country.DE.value: (N_("Cross-border: Germany"), ClassificationKind.cross_border, Country.DE),
    Country.BE.value: (N_("Cross-border: Belgium"), ClassificationKind.cross_border, Country.BE),
}
MONITORED = {"yes": True, "no": False}
VERDICTS = {verdict.value: verdict for verdict in Verdict}
CURSOR = N_("Cursor")
FILTER_NAMES = ("reference", "verdict", "test", "monitored", "created_after", "created_before")
LABELS = {
    "reference": N_("Reference"),
    "verdict": N_("Verdict"),
    "test": N_("Test"),
    "monitored": N_("Monitored"),
    "created_after": N_("Created after"),
    "created_before": N_("Created before"),
}
STALE_CURSOR = text(
    N_("This page link belongs to another list or is out of date: the list starts again from the newest.")
)


@dataclass(frozen=True, slots=True)
class ShownClassification:
    """What the list shows: the environment, the filters as typed (echoed in the form and the page links)."""

    environment: Environment
    values: dict[str, str]
    filters: listing.ClassificationFilter
    cursor: str | None


def _shown(request: Request) -> ShownClassification:
    """The filters of the query string, checked as `GET /v1/classifications` checks its own; FilterError if not."""
    params = request.query_params
    values = {name: query.text(params, name, LABELS[name]) for name in FILTER_NAMES}
    test = query.choice(values["test"], TESTS, LABELS["test"])
    after = query.moment(values["created_after"], LABELS["created_after"])
    before = query.moment(values["created_before"], LABELS["created_before"])
    if after is not None and before is not None and after >= before:
        raise query.FilterError(
            N_("“%(label)s” must be earlier than “%(later)s”."),
            LABELS["created_after"],
            later=text(LABELS["created_before"]),
        )
    filters = listing.ClassificationFilter(
        reference=values["reference"] or None,
        verdict=query.choice(values["verdict"], VERDICTS, LABELS["verdict"]),
        kind=test[1] if test else None,
        country=test[2] if test else None,
        monitored=query.choice(values["monitored"], MONITORED, LABELS["monitored"]),
        created_after=after,
        created_before=before,
    )
    return ShownClassification(query.environment(params), values, filters, query.text(params, "cursor", CURSOR) or None)


def _test_names(request: Request) -> dict[str, str]:
    translator = translator_of(request)
    return {name: translator.text(label) for name, (label, _, _) in TESTS.items()}


def _list_page(request: Request, account: CurrentAccount, *, status_code: int = 200, **context: Any) -> HTMLResponse:
    return render(
        request,
        "classifications/list.html",
        account=account,
        status_code=status_code,
        tests=_test_names(request),
        retention=classify_service.Retention.of(state_of(request).settings),
        verdicts=list(Verdict),
        environments=list(Environment),
        **{
            "environment": Environment.live,
            "values": {},
            "rows": [],
            "from_dashboard": set(),
            "next_link": None,
            **context,
        },
    )


@router.get(PATH, include_in_schema=False)
async def classifications_page(request: Request, account: CurrentAccount, session: DbSession) -> HTMLResponse:
    try:
        shown = _shown(request)
    except query.FilterError as exc:
        return _list_page(
            request,
            account,
            status_code=400,
            error=exc.message,
            values=query.echoed(request.query_params, FILTER_NAMES),
        )
    now = utcnow()
    since = classify_service.Retention.of(state_of(request).settings).cutoff(shown.environment, now)
    context: dict[str, Any] = {
        "environment": shown.environment,
        "values": shown.values,
        "paged": shown.cursor is not None,
    }
    try:
        page = await listing.list_classifications(
            session,
            Acting.of(account, shown.environment),
            shown.filters,
            limit=DEFAULT_LIMIT,
            cursor=shown.cursor,
            cursors=cursors_of(request),
            since=since,
        )
    except (ApiError, InvalidFields):
        return _list_page(request, account, status_code=400, error=STALE_CURSOR, **context)
    links = {"environment": shown.environment.value, **shown.values}
    next_link = query.link(PATH, {**links, "cursor": page.next_cursor}) if page.next_cursor else None
    first_link = query.link(PATH, links)
    rows = [classify_views.classification_summary(row) for row in page.rows]
    from_dashboard = {row.id for row in page.rows if row.token_id is None}
    return _list_page(
        request,
        account,
        rows=rows,
        from_dashboard=from_dashboard,
        next_link=next_link,
        first_link=first_link,
        **context,
    )


@dataclass(frozen=True, slots=True)
class Rescore:
    """A re-score that changed the verdict, with what made the difference."""

    later: LaterVerdict
    causes: list[dict[str, Any]]


def _rescores(record: ClassificationRecord) -> list[Rescore]:
    """The history, each entry with its causes against the verdict it replaced (the original one for the first)."""
    previous = record.result.model_dump(mode="json")
    found: list[Rescore] = []
    for later in record.history:
        new = later.result.model_dump(mode="json")
        found.append(Rescore(later, causes(previous, new)))
        previous = new
    return found


@router.get(PATH + "/{environment}/{classification_id}", include_in_schema=False)
async def classification_page(
    request: Request, environment: Environment, account: CurrentAccount, found: OwnClassification
) -> Response:
    if found is None:
        return not_found(request, account)
    record = classify_views.classification_record(found)
    return render(
        request,
        "classifications/detail.html",
        labels=_labels(record, rulesets_of(request)),
        account=account,
        record=record,
        environment=environment,
        rescores=_rescores(record),
        tests=_test_names(request),
        asked_here=found.record.asked_by_user_id is not None,
    )


@dataclass(frozen=True, slots=True)
class Labels:
    """What the explanation names instead of field and criterion ids, in the verdict's language: the question that
    asks each input, and the description of each cross-border criterion (what "met" means)."""

    asked: dict[str, str]
    described: dict[str, str]
    criteria: dict[str, str]
    """Each criterion by its id (Dutch test) or name (cross-border): the question it reads, or its description."""


def _labels(record: ClassificationRecord, rulesets: Rulesets) -> Labels:
    language = CODES[record.language]
    if record.kind is ClassificationKind.zelfstandigenwet:
        asked = {q.input: q.text[language] for q in rulesets.dutch.questions}
        return Labels(asked, {}, {c.id: asked[c.input] for c in rulesets.dutch.criteria})
    result = record.result
    if not isinstance(result, CrossBorderVerdict):
        return Labels({}, {}, {})
    ruleset = rulesets.cross_border[result.country]
    described = {c.name: c.description[language] for c in ruleset.criteria}
    return Labels({c.name: c.question[language] for c in ruleset.criteria}, described, described)


@router.get(PATH + "/{environment}/{classification_id}/dossier.pdf", include_in_schema=False)
async def classification_dossier(
    request: Request,
    environment: Environment,
    classification_id: uuid.UUID,
    account: CurrentAccount,
    session: DbSession,
) -> Response:
    """The verdict's signed dossier as a PDF, as `GET /v1/classifications/{id}/dossier` answers it, read with the
    request's session (the one that found the signed-in account). Rendering costs CPU: limited by its own bucket
    on top of the page limit."""
    await throttled(request, throttle.dossier_buckets(account.id))
    try:
        return await dossier_response(request, session, Acting.of(account, environment), classification_id, PDF)
    except ApiError:  # another user's, the other environment's, expired or unknown
        return not_found(request, account)


PAGE = DashboardPage(router, NavItem(N_("Verdicts"), PATH, order=50))
