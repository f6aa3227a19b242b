"""Sign up, sign in, sign out and password reset."""

from __future__ import annotations

from typing import Annotated, Any

import structlog
from fastapi import APIRouter, BackgroundTasks, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from compliance_api.accounts.models import User, UserKind
from compliance_api.dashboard import service as account_service
from compliance_api.dashboard import throttle
from compliance_api.dashboard.i18n import N_, text
from compliance_api.dashboard.nav import DashboardPage
from compliance_api.dashboard.web import (
    MOUNT,
    SESSION_COOKIE,
    CheckedForm,
    clear_session_cookie,
    cookie,
    field,
    redirect,
    render,
    safe_next,
    set_cookie,
    state_of,
    translator_of,
    wait_message,
)
from compliance_api.kit.addresses import request_base_url
from compliance_api.kit.clock import utcnow
from compliance_api.ratelimit.tiers import Tier
from compliance_api.sessions import DbSession

log = structlog.get_logger()
router = APIRouter()
WRONG_CREDENTIALS = text(N_("The e-mail address or the password is wrong."))


def _address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


async def _throttled(
    request: Request, purpose: str, email: str | None, per_account: Tier, per_address: Tier
) -> int | None:
    buckets = [(throttle.address_key(purpose, _address(request)), per_address)]
    if email is not None:
        buckets.append((throttle.account_key(purpose, email), per_account))
    return await throttle.retry_after(state_of(request).limiter, buckets)


def _too_many(request: Request, template: str, wait: int, **context: Any) -> HTMLResponse:
    response = render(request, template, status_code=429, error=wait_message(request, wait), **context)
    response.headers["Retry-After"] = str(wait)
    return response


async def _signed_in(request: Request, session: DbSession, user: User, next_path: str) -> RedirectResponse:
    state = state_of(request)
    old = cookie(request, SESSION_COOKIE)
    if old is not None:  # a new session id at every sign-in: no session fixation
        await account_service.end_session(session, cookie=old, pepper=state.pepper)
    value = await account_service.start_session(
        session, user=user, pepper=state.pepper, lifetime=state.session_lifetime, now=utcnow()
    )
    response = redirect(next_path)
    set_cookie(response, request, SESSION_COOKIE, value, int(state.session_lifetime.total_seconds()))
    return response


@router.get("/", include_in_schema=False)
async def home() -> RedirectResponse:
    return redirect("/api-tokens")


@router.get("/sign-up", include_in_schema=False)
async def sign_up_form(request: Request) -> HTMLResponse:
    return render(request, "account/sign_up.html", email="", kind="freelancer")


@router.post("/sign-up", include_in_schema=False)
async def sign_up(request: Request, form: CheckedForm, session: DbSession) -> Response:
    email, kind = field(form, "email"), field(form, "kind")
    context: dict[str, Any] = {"email": email, "kind": kind}
    wait = await _throttled(request, "sign_up", None, throttle.SIGN_UP_PER_ADDRESS, throttle.SIGN_UP_PER_ADDRESS)
    if wait is not None:
        return _too_many(request, "account/sign_up.html", wait, **context)
    if kind not in set(UserKind):
        error = text(N_("Choose an account kind."))
        return render(request, "account/sign_up.html", status_code=400, error=error, **context)
    try:
        user = await account_service.sign_up(
            session,
            email=email,
            password=field(form, "password"),
            kind=UserKind(kind),
            hasher=state_of(request).password_hasher,
            now=utcnow(),
        )
    except account_service.AccountFormError as exc:
        return render(request, "account/sign_up.html", status_code=400, error=exc.text, **context)
    log.info("dashboard_signed_up", user_id=str(user.id), kind=str(user.kind))
    return await _signed_in(request, session, user, "/api-tokens")


@router.get("/sign-in", include_in_schema=False)
async def sign_in_form(
    request: Request, next_path: Annotated[str | None, Query(alias="next", max_length=300)] = None
) -> HTMLResponse:
    return render(request, "account/sign_in.html", email="", next_path=MOUNT + safe_next(next_path))


@router.post("/sign-in", include_in_schema=False)
async def sign_in(request: Request, form: CheckedForm, session: DbSession) -> Response:
    email = field(form, "email")
    context: dict[str, Any] = {"email": email, "next_path": MOUNT + safe_next(field(form, "next"))}
    wait = await _throttled(request, "sign_in", email, throttle.SIGN_IN_PER_ACCOUNT, throttle.SIGN_IN_PER_ADDRESS)
    if wait is not None:
        log.warning("dashboard_sign_in_throttled", address=_address(request), retry_after=wait)
        return _too_many(request, "account/sign_in.html", wait, **context)
    user = await account_service.authenticate(
        session,
        email=email,
        password=field(form, "password"),
        hasher=state_of(request).password_hasher,
        now=utcnow(),
    )
    if user is None:
        log.info("dashboard_sign_in_failed", address=_address(request))
        return render(request, "account/sign_in.html", status_code=400, error=WRONG_CREDENTIALS, **context)
    log.info("dashboard_signed_in", user_id=str(user.id), address=_address(request))
    return await _signed_in(request, session, user, safe_next(field(form, "next")))


@router.post("/sign-out", include_in_schema=False)
async def sign_out(request: Request, _: CheckedForm, session: DbSession) -> RedirectResponse:
    value = cookie(request, SESSION_COOKIE)
    if value is not None:
        await account_service.end_session(session, cookie=value, pepper=state_of(request).pepper)
    response = redirect("/sign-in?done=signed_out")
    clear_session_cookie(response, request)
    return response


@router.get("/reset-password", include_in_schema=False)
async def reset_request_form(request: Request) -> HTMLResponse:
    return render(request, "account/reset_request.html", email="", sent=False)


@router.post("/reset-password", include_in_schema=False)
async def reset_request(
    request: Request, form: CheckedForm, session: DbSession, background: BackgroundTasks
) -> HTMLResponse:
    """Always the same answer, known e-mail or not; the mail goes out after the response, so timing tells nothing."""
    email = field(form, "email")
    wait = await _throttled(request, "reset", email, throttle.RESET_PER_ACCOUNT, throttle.RESET_PER_ADDRESS)
    if wait is not None:
        return _too_many(request, "account/reset_request.html", wait, email=email, sent=False)
    state = state_of(request)
    found = await account_service.request_reset(
        session, email=email, pepper=state.pepper, lifetime=state.reset_lifetime, now=utcnow()
    )
    if found is not None:
        user, token = found
        link = account_service.reset_link(request_base_url(request.scope, state.settings.public_base_url), token)
        translator = translator_of(request)  # the mail is in the language the form was sent in
        body = translator.gettext(
            "Someone asked to set a new password for %(email)s on the compliance-api dashboard.\n\n"
            "Open this link within %(minutes)s minutes to choose one (it works once):\n"
            "%(link)s\n\nIf it was not you, ignore this message; your password stays as it is.\n",
            email=user.email,
            minutes=state.settings.password_reset_minutes,
            link=link,
        )
        subject = translator.gettext("Set your compliance-api password")
        background.add_task(state.mailer.send, to=user.email, subject=subject, body=body)
    return render(request, "account/reset_request.html", email="", sent=True)


@router.get("/reset-password/confirm", include_in_schema=False)
async def reset_form(
    request: Request, session: DbSession, token: Annotated[str, Query(max_length=128)] = ""
) -> HTMLResponse:
    state = state_of(request)
    usable = bool(token) and await account_service.reset_is_usable(
        session, token=token, pepper=state.pepper, now=utcnow()
    )
    error = None if usable else account_service.INVALID_RESET_LINK
    return render(request, "account/reset.html", token=token, error=error, status_code=200 if usable else 400)


@router.post("/reset-password/confirm", include_in_schema=False)
async def reset(request: Request, form: CheckedForm, session: DbSession) -> Response:
    token = field(form, "token")
    try:
        state = state_of(request)
        user = await account_service.reset_password(
            session,
            token=token,
            password=field(form, "password"),
            pepper=state.pepper,
            hasher=state.password_hasher,
            now=utcnow(),
        )
    except account_service.AccountFormError as exc:
        return render(request, "account/reset.html", status_code=400, token=token, error=exc.text)
    log.info("dashboard_password_reset", user_id=str(user.id))
    response = redirect("/sign-in?done=password_set")
    clear_session_cookie(response, request)
    return response


PAGE = DashboardPage(router)
