"""The dashboard: a server-rendered sub-application mounted at `/freelancer`, outside the `/v1` API and its contract.

Its own HTML error pages; a strict Content-Security-Policy (no inline code, nothing from other hosts); `no-store`
on pages (some show a secret once); the CSRF cookie handed to every browser that has none; every page in the language
of the switch's cookie or the browser's `Accept-Language`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import asyncpg  # type: ignore[import-untyped]
import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from compliance_api.dashboard import i18n
from compliance_api.dashboard.i18n import N_
from compliance_api.dashboard.keys import new_secret
from compliance_api.dashboard.mail import mailer_for
from compliance_api.dashboard.nav import NavItem
from compliance_api.dashboard.pages import DASHBOARD_PAGES
from compliance_api.dashboard.web import (
    CSRF_COOKIE,
    MOUNT,
    TEMPLATES_DIR,
    CsrfRejected,
    DashboardState,
    FormFieldRejected,
    SignInRequired,
    TooManyRequests,
    render,
    wait_message,
)
from compliance_api.kit.outage import RETRY_AFTER_SECONDS, is_database_unreachable

if TYPE_CHECKING:
    from compliance_api.kit.registry import Registry
    from compliance_api.services import Services

CONTENT_SECURITY_POLICY = (
    b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    b"frame-ancestors 'none'; base-uri 'none'"
)
STATIC_DIR = Path(__file__).parent / "static"
CSRF_COOKIE_MAX_AGE = 365 * 24 * 3600
# The errors a lost database can raise (SQLAlchemy's, asyncpg's on our own pools, and the sockets' own).
DATABASE_FAILURES: tuple[type[Exception], ...] = (
    SQLAlchemyError,
    OSError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
)

log = structlog.get_logger()


class DashboardHeaders:
    """Pure ASGI: CSP and `Cache-Control: no-store` on every dashboard response, a CSRF cookie when missing, and the
    language of the answer (`Content-Language`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        connection = HTTPConnection(scope)
        existing = connection.cookies.get(CSRF_COOKIE)
        value = existing if existing and len(existing) <= 128 else new_secret()
        language = i18n.chosen_language(
            connection.cookies.get(i18n.LANGUAGE_COOKIE), connection.headers.get("accept-language")
        )
        state = scope.setdefault("state", {})
        state["csrf_cookie"], state["language"] = value, language
        headers = [
            (b"content-security-policy", CONTENT_SECURITY_POLICY),
            (b"cache-control", b"no-store"),
            (b"content-language", language.code.encode()),
            (b"vary", b"Accept-Language, Cookie"),
        ]
        if value != existing:
            secure = "; Secure" if scope.get("scheme") == "https" else ""
            cookie = f"{CSRF_COOKIE}={value}; Max-Age={CSRF_COOKIE_MAX_AGE}; Path={MOUNT}; HttpOnly; SameSite=Lax"
            headers.append((b"set-cookie", (cookie + secure).encode()))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", ()) if k != b"cache-control"]
                message["headers"] = [*kept, *headers]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _sign_in_required(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SignInRequired)
    return RedirectResponse(f"{MOUNT}/sign-in?next={exc.next_path}", status_code=303)


async def _csrf_rejected(request: Request, _: Exception) -> Response:
    return render(request, "csrf.html", status_code=403)


async def _form_field_rejected(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, FormFieldRejected)
    return render(request, "form-rejected.html", status_code=400, message=exc.message)


async def _too_many_requests(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, TooManyRequests)
    page = render(
        request,
        "too-many.html",
        status_code=429,
        error=wait_message(request, exc.retry_after),
        title=N_("Too many requests"),
    )
    page.headers["Retry-After"] = str(exc.retry_after)
    return page


TITLES = {400: N_("Bad request"), 404: N_("Page not found"), 405: N_("Method not allowed")}


async def _database_unavailable(request: Request, exc: Exception) -> Response:
    """A 503 page with `Retry-After` when the database is out of reach; any other error stays a 500."""
    if not is_database_unreachable(exc):
        raise exc
    log.warning("database_unavailable", path=request.url.path, error=type(exc).__name__)
    page = render(request, "unavailable.html", status_code=503)
    page.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return page


async def _error_page(request: Request, exc: Exception) -> Response:
    """HTML error pages; a malformed id in a path (a validation error) is a page that does not exist: 404."""
    status = exc.status_code if isinstance(exc, StarletteHTTPException) else 404
    return render(request, "error.html", status_code=status, title=TITLES.get(status, N_("Something went wrong")))


def _nav() -> tuple[NavItem, ...]:
    return tuple(sorted((p.nav for p in DASHBOARD_PAGES if p.nav is not None), key=lambda item: item.order))


def create_dashboard(services: Services, registry: Registry) -> FastAPI:
    """The `/freelancer` sub-application (mounted by `create_app`; not part of the OpenAPI contract), reading the
    app's collaborators from the app's `registry`."""
    dashboard = FastAPI(openapi_url=None, docs_url=None, redoc_url=None, redirect_slashes=False)
    dashboard.state.registry = registry
    templates = Jinja2Templates(env=i18n.template_environment(TEMPLATES_DIR))
    dashboard.state.dashboard = DashboardState(
        settings=services.settings,
        pepper=services.pepper,
        templates=templates,
        mailer=mailer_for(services.settings),
        limiter=services.limiter,
        nav=_nav(),
    )
    for page in DASHBOARD_PAGES:
        dashboard.include_router(page.router)
    dashboard.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    dashboard.add_exception_handler(SignInRequired, _sign_in_required)
    dashboard.add_exception_handler(TooManyRequests, _too_many_requests)
    dashboard.add_exception_handler(CsrfRejected, _csrf_rejected)
    dashboard.add_exception_handler(FormFieldRejected, _form_field_rejected)
    dashboard.add_exception_handler(StarletteHTTPException, _error_page)
    dashboard.add_exception_handler(RequestValidationError, _error_page)
    for failure in DATABASE_FAILURES:
        dashboard.add_exception_handler(failure, _database_unavailable)
    dashboard.add_middleware(DashboardHeaders)
    return dashboard
