"""What every dashboard page shares: state, templates, the signed-in account, checked forms, redirects."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from argon2 import PasswordHasher
from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from starlette.datastructures import FormData

from compliance_api.accounts.models import User
from compliance_api.config import Settings
from compliance_api.dashboard import csrf, passwords, throttle
from compliance_api.dashboard import service as account_service
from compliance_api.dashboard.i18n import N_, SWITCH, Text, Translator, text
from compliance_api.dashboard.i18n import NATIVE_NAMES as LANGUAGE_NAMES
from compliance_api.dashboard.mail import Mailer
from compliance_api.dashboard.nav import NavItem
from compliance_api.errors import ApiError
from compliance_api.kit.clock import utcnow
from compliance_api.kit.schemas import NUL
from compliance_api.ratelimit.limiter import Limiter
from compliance_api.ratelimit.tiers import Tier
from compliance_api.sessions import DbSession

MOUNT = "/freelancer"
SESSION_COOKIE = "dashboard_session"
CSRF_COOKIE = "dashboard_csrf"
TEMPLATES_DIR = Path(__file__).parent / "templates"
MAX_FIELD_LENGTH = 1000
NOTICES = {
    "signed_out": N_("You are signed out."),
    "password_set": N_("Your password is set: sign in with it."),
    "token_revoked": N_("The token is revoked: every request with it is refused within 5 seconds."),
    "share_revoked": N_("The share link is revoked: verifiers get 404 for it from now on."),
    "webhook_test_sent": N_("A test event is queued: it appears in the delivery log below."),
    "webhook_retried": N_("The delivery is queued again, with a fresh retry schedule."),
    "webhook_deleted": N_("The endpoint and its delivery log are deleted; nothing more is sent to it."),
    "grant_created": N_("The grant is active: that account may now read your DAC7 figures in this environment."),
    "grant_revoked": N_("The grant is revoked: the grantee's next read of your DAC7 figures is refused."),
    "identity_saved": N_("Your DAC7 identity is saved: the next DAC7 file sends it, as a correction if it was sent."),
}


class SignInRequired(Exception):
    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


class TooManyRequests(Exception):
    """A signed-in user over the rate limit of their pages: a 429 page saying how long to wait."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after


class CsrfRejected(Exception):
    """A form without a valid CSRF token, or from another origin."""


class FormFieldRejected(Exception):
    """A form field holding a NUL character (PostgreSQL cannot store it in text): nothing in the form is used. A page
    that can show the error next to its form catches it; elsewhere the dashboard answers a 400 page naming the field."""

    def __init__(self, field_name: str) -> None:
        super().__init__(field_name)
        self.field_name = field_name

    @property
    def message(self) -> Text:
        return text(
            N_("The field “%(field)s” contains a NUL character (U+0000), which is not allowed."), field=self.field_name
        )


@dataclass(slots=True)
class DashboardState:
    settings: Settings
    pepper: bytes
    templates: Jinja2Templates
    mailer: Mailer
    limiter: Limiter  # the API's (Redis when configured), for the sign-in and reset throttles
    nav: tuple[NavItem, ...]

    @property
    def session_lifetime(self) -> dt.timedelta:
        return dt.timedelta(hours=self.settings.dashboard_session_hours)

    @property
    def reset_lifetime(self) -> dt.timedelta:
        return dt.timedelta(minutes=self.settings.password_reset_minutes)

    @property
    def password_hasher(self) -> PasswordHasher:
        return passwords.hasher_for(self.settings.password_hash_profile)


def state_of(request: Request) -> DashboardState:
    state: DashboardState = request.app.state.dashboard
    return state


def cookie(request: Request, name: str) -> str | None:
    value = request.cookies.get(name)
    return value if value and len(value) <= 128 else None


def csrf_token(request: Request) -> str:
    """The token for this browser's forms (the CSRF cookie is set by the dashboard middleware when missing)."""
    return csrf.token_for(
        state_of(request).pepper,
        csrf_cookie=request.scope["state"]["csrf_cookie"],
        session_cookie=cookie(request, SESSION_COOKIE),
    )


def translator_of(request: Request) -> Translator:
    """The texts of the language this request is answered in (chosen by the dashboard middleware)."""
    return Translator(request.scope["state"]["language"])


def here(request: Request) -> str:
    """The page's own path and query: where the language switch returns to."""
    return request.url.path + (f"?{request.url.query}" if request.url.query else "")


def render(
    request: Request,
    template: str,
    *,
    account: User | None = None,
    status_code: int = 200,
    error: Text | str | None = None,
    **context: Any,
) -> HTMLResponse:
    """A page in the request's language; an `error` given as a `Text` is translated (a `str` is shown as it is)."""
    state = state_of(request)
    translator = translator_of(request)
    notice = NOTICES.get(request.query_params.get("done", ""))
    page: HTMLResponse = state.templates.TemplateResponse(
        request,
        template,
        {
            "account": account,
            "nav": state.nav if account is not None else (),
            "current": request.url.path,
            "here": here(request),
            "mount": MOUNT,
            "csrf_field": csrf.FIELD,
            "csrf_token": csrf_token(request),
            "translator": translator,
            "language": translator.code,
            "languages": [(language.code, LANGUAGE_NAMES[language]) for language in SWITCH],
            "notice": translator.gettext(notice) if notice else None,
            "error": translator.text(error) if isinstance(error, Text) else error,
            **context,
        },
        status_code=status_code,
    )
    return page


def wait_message(request: Request, wait: int) -> str:
    """ "Too many attempts", and how long to wait, in the request's language."""
    translator = translator_of(request)
    if wait < 120:
        return translator.ngettext(
            "Too many attempts. Wait %(num)s second and try again.",
            "Too many attempts. Wait %(num)s seconds and try again.",
            wait,
        )
    return translator.gettext("Too many attempts. Wait %(minutes)s minutes and try again.", minutes=-(-wait // 60))


def api_problem(exc: ApiError, texts: dict[str, Text]) -> Text | str:
    """What a page says about a refusal of a service it calls: its own text for the codes it expects, else the
    API's (English) detail."""
    return texts.get(exc.code, exc.detail)


def not_found(request: Request, account: User) -> HTMLResponse:
    return render(request, "error.html", account=account, status_code=404, title=N_("Not found"))


def redirect(path: str) -> RedirectResponse:
    """303 See Other to a dashboard path (after a POST, the browser then GETs it)."""
    return RedirectResponse(MOUNT + path, status_code=303)


def safe_next(value: str | None) -> str:
    """Where to go after signing in: a dashboard path only (never another site), else the token page."""
    if value and value.startswith(MOUNT + "/") and "//" not in value and "\\" not in value:
        return value[len(MOUNT) :]
    return "/api-tokens"


async def _account(request: Request, session: DbSession) -> User:
    value = cookie(request, SESSION_COOKIE)
    user = None
    if value is not None:
        user = await account_service.session_user(session, cookie=value, pepper=state_of(request).pepper, now=utcnow())
    if user is None:
        raise SignInRequired(quote(request.url.path, safe="/"))
    await throttled(request, throttle.page_buckets(user.id, user.plan))
    return user


async def throttled(request: Request, buckets: list[tuple[str, Tier]]) -> None:
    """Take one attempt from each bucket; TooManyRequests if any is empty."""
    wait = await throttle.retry_after(state_of(request).limiter, buckets)
    if wait is not None:
        raise TooManyRequests(wait)


async def _checked_form(request: Request) -> FormData:
    """The POSTed form, after its CSRF token and origin are checked (CsrfRejected otherwise)."""
    form = await request.form(max_files=0, max_fields=50, max_part_size=MAX_FIELD_LENGTH * 4)
    submitted = form.get(csrf.FIELD)
    if not csrf.same_origin(
        request.headers.get("origin"), scheme=request.url.scheme, host=request.headers.get("host", "")
    ) or not csrf.is_valid(
        state_of(request).pepper,
        submitted if isinstance(submitted, str) else "",
        csrf_cookie=cookie(request, CSRF_COOKIE),
        session_cookie=cookie(request, SESSION_COOKIE),
    ):
        raise CsrfRejected
    return form


def field(form: FormData, name: str) -> str:
    """One text field of a form ('' when absent), cut to a sane length; FormFieldRejected if it holds NUL."""
    value = form.get(name)
    if not isinstance(value, str):
        return ""
    if NUL in value:
        raise FormFieldRejected(name)
    return value[:MAX_FIELD_LENGTH]


def int_field(form: FormData, name: str, *, minimum: int, maximum: int) -> int | None:
    """A whole number field in ASCII digits (spaces around allowed) from `minimum` to `maximum`, else None. Never
    `str.isdigit` and `int` alone: they take "²" (then `int` raises), "٣" and "１"."""
    value = field(form, name).strip()
    if not (value.isascii() and value.isdigit()):
        return None
    number = int(value)
    return number if minimum <= number <= maximum else None


CurrentAccount = Annotated[User, Depends(_account)]
CheckedForm = Annotated[FormData, Depends(_checked_form)]


def set_cookie(
    response: RedirectResponse | HTMLResponse, request: Request, name: str, value: str, max_age: int
) -> None:
    """HttpOnly, SameSite=Lax, limited to the dashboard's paths; Secure when the request came over https."""
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=MOUNT,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


def clear_session_cookie(response: RedirectResponse | HTMLResponse, request: Request) -> None:
    response.delete_cookie(
        SESSION_COOKIE, path=MOUNT, httponly=True, samesite="lax", secure=request.url.scheme == "https"
    )
