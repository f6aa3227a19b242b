"""`/freelancer/assessments`: a business user answers a test's questions (yes, no or don't know; numbers for the
Dutch test's figures) and checks the verdict, what decided it and what to answer next, as often as the answers
change; saving keeps it. A check is the API's dry run (`score_engagement`, `score_cross_border` and
`classify_service.dry_run`: nothing kept); a save is a classification made by the API's own service call
(`classify_engagement`, `classify_cross_border`). Both are checked by the API's request schemas and drawn from the
account's rate-limit bucket of that environment, so a saved one lands in the same audit trail, under the same limits,
as one made with a token."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import structlog
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import FormData

from compliance_api.accounts.models import User, UserKind
from compliance_api.classify import service as classify_service
from compliance_api.classify.dependencies import rulesets_of
from compliance_api.classify.language import Language
from compliance_api.classify.ruleset import Rulesets
from compliance_api.classify.schemas import CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.dashboard import query
from compliance_api.dashboard.classification import OwnClassification
from compliance_api.dashboard.i18n import N_, Translator, text
from compliance_api.dashboard.nav import DashboardPage, NavItem
from compliance_api.dashboard.questionnaire import (
    TEST_NAMES,
    FormFact,
    FormQuestion,
    QuestionnaireKind,
    Submission,
    answer_sets,
    answers_of,
    deciding_facts,
    next_questions,
    questionnaire_of,
    questions_for,
    submission,
)
from compliance_api.dashboard.service import Acting
from compliance_api.dashboard.web import (
    CheckedForm,
    CurrentAccount,
    field,
    not_found,
    redirect,
    render,
    translator_of,
)
from compliance_api.errors import request_id_of
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import group_commit_of
from compliance_api.ratelimit.dependencies import limiter_of
from compliance_api.ratelimit.gcra import Decision
from compliance_api.ratelimit.tiers import Tier, tier_for, user_bucket
from compliance_api.requestlog.buffer import Recorded
from compliance_api.requestlog.dependencies import buffer_of

log = structlog.get_logger()
router = APIRouter()
PATH = "/assessments"
QUESTIONNAIRES = {questionnaire.value: questionnaire for questionnaire in QuestionnaireKind}
QUESTIONNAIRE, ENVIRONMENT = N_("Test"), N_("Environment")
BUSINESSES_ONLY = text(N_("Assessments are for business accounts: they judge an engagement you hire a freelancer for."))


def _names(translator: Translator) -> dict[str, str]:
    return {questionnaire.value: translator.gettext(name) for questionnaire, name in TEST_NAMES.items()}


def _start(request: Request, account: User, *, status_code: int = 200, **context: Any) -> HTMLResponse:
    return render(
        request,
        "assessments/start.html",
        account=account,
        status_code=status_code,
        questionnaires=_names(translator_of(request)),
        environments=list(Environment),
        **{"environment": Environment.live, "questionnaire": QuestionnaireKind.zelfstandigenwet, **context},
    )


@router.get(PATH, include_in_schema=False)
async def start_page(request: Request, account: CurrentAccount) -> HTMLResponse:
    return _start(request, account)


def _form(
    request: Request,
    account: User,
    questionnaire: QuestionnaireKind,
    environment: Environment,
    *,
    status_code: int = 200,
    **context: Any,
) -> HTMLResponse:
    translator = translator_of(request)
    return render(
        request,
        "assessments/questions.html",
        account=account,
        status_code=status_code,
        questionnaire=questionnaire,
        questionnaire_name=translator.gettext(TEST_NAMES[questionnaire]),
        questions=questions_for(questionnaire, rulesets_of(request), translator),
        environment=environment,
        tier=tier_for(account.plan, environment),
        **{"values": {}, "reference": "", "errors": {}, **context},
    )


@router.get(PATH + "/new", include_in_schema=False)
async def new_assessment(request: Request, account: CurrentAccount) -> HTMLResponse:
    if account.kind is not UserKind.business:
        return _start(request, account, status_code=403, error=BUSINESSES_ONLY)
    params = request.query_params
    try:
        questionnaire = query.choice(query.text(params, "questionnaire", QUESTIONNAIRE), QUESTIONNAIRES, QUESTIONNAIRE)
        environment = query.environment(params)
    except query.FilterError as exc:
        return _start(request, account, status_code=400, error=exc.message)
    if questionnaire is None:
        return _start(request, account, environment=environment)
    return _form(request, account, questionnaire, environment)


def _too_many(request: Request, wait: int, tier: Tier) -> str:
    translator = translator_of(request)
    until = (utcnow() + dt.timedelta(seconds=wait)).strftime("%H:%M:%S")
    return translator.ngettext(
        "You have reached your rate limit of %(per_minute)s requests a minute (bursts of %(burst)s), which your API "
        "tokens share. Nothing was sent: your answers are kept below. Send them again in %(num)s second (after "
        "%(until)s UTC).",
        "You have reached your rate limit of %(per_minute)s requests a minute (bursts of %(burst)s), which your API "
        "tokens share. Nothing was sent: your answers are kept below. Send them again in %(num)s seconds (after "
        "%(until)s UTC).",
        wait,
        per_minute=translator.number(tier.per_minute),
        burst=translator.number(tier.burst),
        until=until,
    )


SAVE = "save"
"""The form's `action` that keeps the verdict; any other (the "check" button) is a dry run."""


@router.post(PATH, include_in_schema=False)
async def submit(request: Request, account: CurrentAccount, form: CheckedForm) -> Response:
    """Score the answers as the API would for a token of this account: shown above the answers without keeping
    anything (a dry run), or kept and shown on the new verdict's page (`action=save`, a new verdict each time)."""
    if account.kind is not UserKind.business:
        return _start(request, account, status_code=403, error=BUSINESSES_ONLY)
    questionnaire = QUESTIONNAIRES.get(field(form, "questionnaire"))
    environment = query.ENVIRONMENTS.get(field(form, "environment"))
    if questionnaire is None or environment is None:
        return _start(request, account, status_code=400, error=text(N_("Choose a test and an environment.")))
    rulesets, translator = rulesets_of(request), translator_of(request)
    questions = questions_for(questionnaire, rulesets, translator)
    answered = submission(questionnaire, questions, form, translator)
    kept: dict[str, Any] = {"values": answered.values, "reference": answered.reference}
    tier = tier_for(account.plan, environment)
    started = time.perf_counter()
    decision = await limiter_of(request).consume(user_bucket(account.id, environment), tier)
    response = await _assessed(request, account, questionnaire, environment, form, answered, kept, decision)
    _log_request(request, Acting.of(account, environment), questionnaire, form, response, decision, started)
    return response


def _log_request(
    request: Request,
    asking: Acting,
    questionnaire: QuestionnaireKind,
    form: FormData,
    response: Response,
    decision: Decision,
    started: float,
) -> None:
    """Into the request log as the API operation it stands for (a check as its dry run, a save as the kept one),
    with no token: so that usage and the log show what the page says counts against the limits."""
    test = "zelfstandigenwet" if questionnaire is QuestionnaireKind.zelfstandigenwet else "cross-border"
    path = f"/v1/classify/{test}" + ("" if field(form, "action") == SAVE else "/dry-run")
    status = 200 if response.status_code == 303 else response.status_code  # a save answers with its verdict's page
    buffer_of(request).record(
        Recorded(
            finished_at=time.time(),
            caller=asking,
            method="POST",
            route=path,
            raw_path=path,
            status=status,
            elapsed=time.perf_counter() - started,
            request_id=request_id_of(request),
            rate_limit_remaining=decision.remaining,
            problem=None,
        )
    )


async def _assessed(
    request: Request,
    account: User,
    questionnaire: QuestionnaireKind,
    environment: Environment,
    form: FormData,
    answered: Submission,
    kept: dict[str, Any],
    decision: Decision,
) -> Response:
    """The page for answers the limiter has counted: the 429, the answers to correct, the check or the saved verdict."""
    rulesets, translator = rulesets_of(request), translator_of(request)
    questions = questions_for(questionnaire, rulesets, translator)
    tier = tier_for(account.plan, environment)
    if not decision.allowed:
        wait = decision.retry_after_seconds
        log.info("dashboard_assessment_rate_limited", user_id=str(account.id), environment=environment.value)
        page = _form(
            request, account, questionnaire, environment, status_code=429, error=_too_many(request, wait, tier), **kept
        )
        page.headers["Retry-After"] = str(wait)
        return page
    if answered.body is None:
        error = answered.errors.get("form") or translator.gettext("Some answers need a correction: see below.")
        return _form(
            request, account, questionnaire, environment, status_code=400, error=error, errors=answered.errors, **kept
        )
    asking, now = Acting.of(account, environment), utcnow()
    if field(form, "action") != SAVE:
        scored = _scored(answered.body, rulesets, now, translator.language, environment)
        preview, asked = classify_service.dry_run(scored), scored.body.model_dump(mode="json", exclude_unset=True)
        log.info("dashboard_assessment_dry_run", user_id=str(account.id), environment=environment.value)
        shown = _shown(questionnaire, preview, asked, questions, translator)
        return _form(request, account, questionnaire, environment, preview=preview, **shown, **kept)
    if isinstance(answered.body, ZelfstandigenwetRequest):
        verdict = await classify_service.classify_engagement(
            group_commit_of(request), asking, answered.body, rulesets, now, translator.language, request_id_of(request)
        )
    else:
        verdict = await classify_service.classify_cross_border(
            group_commit_of(request), asking, answered.body, rulesets, now, translator.language, request_id_of(request)
        )
    log.info(
        "dashboard_assessment",
        user_id=str(account.id),
        environment=environment.value,
        classification_id=str(verdict.id),
        verdict=verdict.verdict.value,
    )
    return redirect(f"{PATH}/{environment.value}/{verdict.id}")


def _scored(
    body: ZelfstandigenwetRequest | CrossBorderRequest,
    rulesets: Rulesets,
    now: dt.datetime,
    language: Language,
    environment: Environment,
) -> classify_service.Scored:
    if isinstance(body, ZelfstandigenwetRequest):
        return classify_service.score_engagement(body, rulesets, now, language, environment)
    return classify_service.score_cross_border(body, rulesets, now, language, environment)


def _shown(
    questionnaire: QuestionnaireKind,
    result: dict[str, Any],
    request: dict[str, Any],
    questions: tuple[FormQuestion, ...],
    translator: Translator,
) -> dict[str, Any]:
    """What the page shows of a verdict, kept or not: what decided it, the presumption and what to answer next."""
    return {
        "facts": deciding_facts(questionnaire, result, request, questions, translator),
        "presumption": _presumption(result, translator),
        "next_questions": next_questions(result, questions),
        "answer_sets": answer_sets(result, questions),
    }


def _presumption(result: dict[str, Any], translator: Translator) -> FormFact | None:
    """The Dutch tariefgrens presumption, when the rate is at or below it: it weighs towards employment (it lowers the
    score at which the verdict is `unsafe`) but decides nothing on its own."""
    threshold = result.get("tariefgrens")
    if not result.get("presumption_of_employment") or threshold is None:
        return None
    return FormFact(
        translator.gettext(
            "The rate is at or below the tariefgrens of EUR %(amount)s (from %(valid_from)s), so employment is "
            "presumed.",
            amount=translator.number(threshold["amount_eur"], 2),
            valid_from=threshold["valid_from"],
        ),
        None,
        threshold["basis"],
        threshold["source_url"],
    )


@router.get(PATH + "/{environment}/{classification_id}", include_in_schema=False)
async def assessment_page(
    request: Request, environment: Environment, account: CurrentAccount, found: OwnClassification
) -> Response:
    """A verdict with what decided it and what to answer next, above its answers ready to change and send again."""
    if found is None:
        return not_found(request, account)
    record, translator = found.record, translator_of(request)
    questionnaire = questionnaire_of(record.kind.value, record.country)
    questions = questions_for(questionnaire, rulesets_of(request), translator)
    return _form(
        request,
        account,
        questionnaire,
        environment,
        record=record,
        asked_here=record.asked_by_user_id is not None,
        **_shown(questionnaire, record.result, record.request, questions, translator),
        values=answers_of(questionnaire, questions, record.request, translator),
        reference=record.reference or "",
    )


PAGE = DashboardPage(router, NavItem(N_("New assessment"), PATH, order=45))
