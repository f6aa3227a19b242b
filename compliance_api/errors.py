"""Errors: one catalogue of stable codes, one exception class tree, one RFC 9457 problem+json renderer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

import orjson
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import Scope, Send

from compliance_api.kit.addresses import DEFAULT_HOST, DEFAULT_PORT, listening_url, request_base_url
from compliance_api.kit.field_names import known_fields, nearest, shown
from compliance_api.kit.invalid import InvalidFields
from compliance_api.kit.patterns import pattern_message
from compliance_api.kit.registry import Slot, collaborator

if TYPE_CHECKING:  # FastAPI only for the handlers: the services (and the CLI) raise these errors without the framework
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from starlette.requests import HTTPConnection

PROBLEM_JSON = "application/problem+json"
HTTP_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


ErrorCode = Literal[
    "validation_failed",
    "malformed_body",
    "malformed_request",
    "missing_token",
    "malformed_token",
    "invalid_token",
    "revoked_token",
    "wrong_environment",
    "in_other_environment",
    "forbidden",
    "freelancer_only",
    "seller_only",
    "not_found",
    "grantee_not_found",
    "grant_not_found",
    "webhook_url_forbidden",
    "webhook_endpoint_not_found",
    "webhook_delivery_not_found",
    "event_not_found",
    "not_in_cache",
    "no_passport",
    "share_not_found",
    "unknown_sector",
    "insufficient_data",
    "method_not_allowed",
    "idempotency_mismatch",
    "idempotency_in_progress",
    "secret_rotation_in_progress",
    "webhook_endpoint_limit",
    "request_timeout",
    "payload_too_large",
    "headers_too_large",
    "unsupported_media_type",
    "not_acceptable",
    "rate_limited",
    "internal_error",
    "service_unavailable",
]
"""Every stable error code: `ApiError` and the problem renderers take only these, so mypy refuses a misspelt one."""


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    code: ErrorCode
    status: int
    title: str
    description: str


ERROR_CATALOGUE: dict[ErrorCode, ErrorSpec] = {
    spec.code: spec
    for spec in (
        ErrorSpec(
            "validation_failed",
            400,
            "Validation failed",
            "The request's body, query or path is invalid; `errors` names each offending field.",
        ),
        ErrorSpec(
            "malformed_body",
            400,
            "Malformed body",
            "The body is not valid JSON, or it is empty where a JSON body is expected.",
        ),
        ErrorSpec(
            "malformed_request",
            400,
            "Malformed request",
            "The request is not valid HTTP/1.1 (answered by the server before the application; the connection closes).",
        ),
        ErrorSpec("missing_token", 401, "Missing bearer token", "No `Authorization: Bearer <token>` header was sent."),
        ErrorSpec(
            "malformed_token",
            401,
            "Malformed bearer token",
            "The Authorization header is not one well-formed token (bad scheme, bad characters or a wrong checksum).",
        ),
        ErrorSpec("invalid_token", 401, "Invalid token", "The token is well formed but unknown."),
        ErrorSpec("revoked_token", 401, "Revoked token", "The token was revoked; create a new one."),
        ErrorSpec(
            "wrong_environment",
            401,
            "Wrong environment",
            "`sk_live_` tokens work only on the production host, `sk_test_` tokens only on the sandbox host.",
        ),
        ErrorSpec(
            "in_other_environment",
            404,
            "In the other environment",
            "The id or share-token is yours in the other environment (a sandbox one sent to production, or the "
            "reverse): `environment` and `base_url` say where to send the request. Anyone else's answers the same "
            "404 as an unknown one.",
        ),
        ErrorSpec("forbidden", 403, "Forbidden", "The caller is not authorised for this resource."),
        ErrorSpec(
            "freelancer_only",
            403,
            "Freelancers only",
            "Passports belong to freelancers: this operation needs a token of a user of kind `freelancer`.",
        ),
        ErrorSpec(
            "seller_only",
            403,
            "Sellers only",
            "DAC7 grants belong to sellers: this operation needs a token of a user of kind `freelancer`.",
        ),
        ErrorSpec("not_found", 404, "Not found", "No such route or resource."),
        ErrorSpec(
            "grantee_not_found", 404, "Grantee not found", "No user has this id; ask the grantee for its user id."
        ),
        ErrorSpec(
            "grant_not_found", 404, "Grant not found", "You gave no DAC7 grant with this id in this environment."
        ),
        ErrorSpec(
            "webhook_url_forbidden",
            403,
            "Webhook URL not allowed",
            "The webhook URL may not be called from this environment: production needs https and a public address (no loopback, private, link-local or other internal addresses).",
        ),
        ErrorSpec(
            "webhook_endpoint_not_found",
            404,
            "Webhook endpoint not found",
            "No webhook endpoint with this id belongs to you in this environment.",
        ),
        ErrorSpec(
            "webhook_delivery_not_found",
            404,
            "Webhook delivery not found",
            "No delivery with this id belongs to this webhook endpoint.",
        ),
        ErrorSpec(
            "event_not_found",
            404,
            "Event not found",
            "No event with this id belongs to you in this environment (events are kept 30 days).",
        ),
        ErrorSpec(
            "not_in_cache",
            404,
            "Not in the register cache",
            "The KvK number is not in this environment's cache of the WTTA admission register; the detail says when "
            "the cache was last refreshed. The admission duty applies from 1 January 2027.",
        ),
        ErrorSpec(
            "no_passport",
            404,
            "No passport",
            "This freelancer has no passport in this environment yet; an operator creates it with `compliance-api passport`.",
        ),
        ErrorSpec(
            "share_not_found",
            404,
            "Share-token not found",
            "The share-token (or share id) is unknown, expired or revoked; ask the freelancer for a new one.",
        ),
        ErrorSpec(
            "unknown_sector",
            404,
            "Unknown sector",
            "The sector is not in the catalogue; `GET /v1/rates/sectors` lists the sector slugs.",
        ),
        ErrorSpec(
            "insufficient_data",
            404,
            "Insufficient data",
            "Too few rate observations for this sector and region to publish a benchmark (below the minimum sample).",
        ),
        ErrorSpec(
            "method_not_allowed",
            405,
            "Method not allowed",
            "The route exists but not for this method; see the `Allow` header.",
        ),
        ErrorSpec(
            "idempotency_mismatch",
            409,
            "Idempotency key reused",
            "The Idempotency-Key was used before with a different request.",
        ),
        ErrorSpec(
            "idempotency_in_progress",
            409,
            "Idempotent request in progress",
            "A request with this Idempotency-Key is still being processed.",
        ),
        ErrorSpec(
            "secret_rotation_in_progress",
            409,
            "Secret rotation in progress",
            "The endpoint's secret was rotated less than 24 hours ago; the previous one still signs until "
            "`previous_secret_expires_at`. Rotate again after that.",
        ),
        ErrorSpec(
            "webhook_endpoint_limit",
            409,
            "Too many webhook endpoints",
            "An account has at most 20 webhook endpoints per environment; delete one first.",
        ),
        ErrorSpec(
            "request_timeout",
            408,
            "Request timeout",
            "The request did not arrive completely in time (`COMPLIANCE_REQUEST_READ_TIMEOUT_SECONDS`); the connection closes.",
        ),
        ErrorSpec("payload_too_large", 413, "Payload too large", "The request body exceeds the size limit (1 MiB)."),
        ErrorSpec(
            "headers_too_large",
            431,
            "Request header fields too large",
            "The request line and headers exceed the size limit (`COMPLIANCE_MAX_HEADER_BYTES`); the connection closes.",
        ),
        ErrorSpec(
            "unsupported_media_type",
            415,
            "Unsupported media type",
            "The body is not JSON (a form or text, say): send it as `application/json`.",
        ),
        ErrorSpec(
            "not_acceptable",
            406,
            "Not acceptable",
            "`Accept` allows none of the media types this operation answers in; the detail names them.",
        ),
        ErrorSpec(
            "rate_limited",
            429,
            "Rate limit exceeded",
            "Too many requests; retry after `Retry-After` seconds, backing off exponentially.",
        ),
        ErrorSpec(
            "internal_error", 500, "Internal error", "Something failed on our side; quote the request id to support."
        ),
        ErrorSpec(
            "service_unavailable",
            503,
            "Service unavailable",
            "A dependency (database) is unreachable; retry with backoff.",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class FieldError:
    field: str
    message: str


MAX_LISTED_ERRORS = 20
"""A problem lists at most this many field errors, and says how many there were (`error_count`) when there were more:
a body with 90,000 unknown keys is answered in a few kilobytes, not 11 MB."""
MAX_MESSAGE = 300
"""A field error's message is cut to this many characters."""


def errors_detail(errors: Sequence[FieldError], total: int | None = None) -> str:
    """A problem's `detail` made of its listed field errors, and how many more there were."""
    listed = errors[:MAX_LISTED_ERRORS]
    more = (len(errors) if total is None else total) - len(listed)
    return "; ".join(f"{e.field}: {e.message}" for e in listed) + (f"; and {more} more" if more > 0 else "")


class ApiError(StarletteHTTPException):
    """An error with a stable code; subclassing HTTPException makes FastAPI re-raise it unchanged while reading bodies."""

    def __init__(
        self,
        code: ErrorCode,
        detail: str | None = None,
        *,
        errors: Sequence[FieldError] = (),
        headers: Mapping[str, str] | None = None,
        error_count: int | None = None,
        extensions: Mapping[str, str] | None = None,
    ) -> None:
        """`errors`: at most the first `MAX_LISTED_ERRORS` are kept; `error_count` says how many there were when
        `errors` holds only the first ones."""
        spec = ERROR_CATALOGUE[code]
        super().__init__(spec.status, detail or spec.description, dict(headers) if headers else None)
        self.code = code
        self.errors = tuple(errors[:MAX_LISTED_ERRORS])
        self.error_count = len(errors) if error_count is None else error_count
        self.extensions = dict(extensions or {})
        """RFC 9457 extension members of the problem (`in_other_environment`: `environment`, `base_url`)."""


def invalid_fields_error(invalid: InvalidFields) -> ApiError:
    """`validation_failed` naming each field `invalid` refused; the detail lists the first `MAX_LISTED_ERRORS`
    messages and says how many more there were."""
    errors = [FieldError(field, message) for field, message in invalid.fields]
    more = len(errors) - MAX_LISTED_ERRORS
    detail = "; ".join(error.message for error in errors[:MAX_LISTED_ERRORS]) + (
        f"; and {more} more" if more > 0 else ""
    )
    return ApiError("validation_failed", detail, errors=errors)


def problem_body(
    code: ErrorCode,
    *,
    request_id: str,
    base_url: str,
    detail: str | None = None,
    errors: Sequence[FieldError] = (),
    error_count: int | None = None,
    extensions: Mapping[str, str] | None = None,
) -> bytes:
    """The problem's JSON; at most `MAX_LISTED_ERRORS` of `errors`, and `error_count` (default: how many `errors`
    holds) when that is more than were listed."""
    spec = ERROR_CATALOGUE[code]
    body: dict[str, Any] = {
        **(extensions or {}),
        "type": f"{base_url}/errors/{code}",
        "title": spec.title,
        "status": spec.status,
        "detail": detail or spec.description,
        "code": code,
        "request_id": request_id,
    }
    if errors:
        listed = errors[:MAX_LISTED_ERRORS]
        body["errors"] = [{"field": e.field, "message": e.message} for e in listed]
        total = len(errors) if error_count is None else error_count
        if total > len(listed):
            body["error_count"] = total
    return orjson.dumps(body)


EXAMPLE_BASE = listening_url(DEFAULT_HOST, DEFAULT_PORT)
EXAMPLE_REQUEST_ID = "req_9c0f72a132838398f6c0d8d7"
EXAMPLE_DETAILS = {
    "missing_token": "Send `Authorization: Bearer <token>`.",
    "malformed_body": "The body is not valid JSON.",
}


def example_problem(code: str, detail: str | None = None, errors: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """The problem `code` as the contract's examples show it (the guide's base URL, a fixed request id)."""
    spec = ERROR_CATALOGUE[cast("ErrorCode", code)]
    body: dict[str, Any] = {
        "type": f"{EXAMPLE_BASE}/errors/{code}",
        "title": spec.title,
        "status": spec.status,
        "detail": detail or EXAMPLE_DETAILS.get(code, spec.description),
        "code": code,
        "request_id": EXAMPLE_REQUEST_ID,
    }
    if errors:
        body["errors"] = errors
    return body


@dataclass(frozen=True, slots=True)
class Problems:
    """This app's problems, as responses and on a raw ASGI `send`: their `type` URLs follow each request's address
    unless `public_base_url` (`COMPLIANCE_PUBLIC_BASE_URL`) is set, and carry the request's id."""

    public_base_url: str

    def base_url(self, scope: Scope) -> str:
        """Where the `type` URLs of this request's problems point."""
        return request_base_url(scope, self.public_base_url)

    def response(
        self,
        scope: Scope,
        code: ErrorCode,
        *,
        detail: str | None = None,
        errors: Sequence[FieldError] = (),
        error_count: int | None = None,
        headers: Mapping[str, str] | None = None,
        extensions: Mapping[str, str] | None = None,
    ) -> Response:
        body = problem_body(
            code,
            request_id=_request_id(scope),
            base_url=self.base_url(scope),
            detail=detail,
            errors=errors,
            error_count=error_count,
            extensions=extensions,
        )
        status = ERROR_CATALOGUE[code].status
        return Response(body, status_code=status, media_type=PROBLEM_JSON, headers=dict(headers) if headers else None)

    async def send(
        self,
        send: Send,
        scope: Scope,
        code: ErrorCode,
        *,
        detail: str | None = None,
        errors: Sequence[FieldError] = (),
        headers: Sequence[tuple[bytes, bytes]] = (),
    ) -> None:
        """Answer directly on an ASGI `send` (for the ASGI layers, which run outside FastAPI's handlers); without a
        `detail`, the field errors make it."""
        if detail is None and errors:
            detail = errors_detail(errors)
        body = problem_body(
            code, request_id=_request_id(scope), base_url=self.base_url(scope), detail=detail, errors=errors
        )
        start_headers = [(b"content-type", PROBLEM_JSON.encode()), (b"content-length", b"%d" % len(body)), *headers]
        await send({"type": "http.response.start", "status": ERROR_CATALOGUE[code].status, "headers": start_headers})
        await send({"type": "http.response.body", "body": body})


def _request_id(scope: Scope) -> str:
    return str(scope.get("state", {}).get("request_id", ""))


PROBLEMS = Slot[Problems]("problems")


def problem_base_url(connection: HTTPConnection) -> str:
    """Where the `type` URLs of this request's problems point."""
    return collaborator(connection, PROBLEMS).base_url(connection.scope)


def request_id_of(connection: HTTPConnection) -> str:
    """The `X-Request-Id` this request is answered under (set for every route by `RequestContext`, the outermost
    middleware)."""
    request_id: str = connection.scope["state"]["request_id"]
    return request_id


def _field_path(location: Sequence[int | str]) -> str:
    parts = [shown(str(p)) for p in location]
    if parts and parts[0] in {"body", "query", "path", "header"}:
        parts = parts[1:] if parts[0] == "body" else parts
    return ".".join(parts) or "body"


def validation_errors(
    exc: RequestValidationError, model: type[BaseModel] | None = None, model_at: int = 1
) -> tuple[list[FieldError], int]:
    """The first `MAX_LISTED_ERRORS` field errors, and how many there are. An unknown field of `model` (whose own
    fields start at `model_at` in an error's location, after `body`) names the nearest known field, if any."""
    every = exc.errors()
    found: list[FieldError] = []
    for error in every[:MAX_LISTED_ERRORS]:
        location = tuple(error.get("loc", ()))
        context = error.get("ctx", {})
        message = str(error.get("msg", "invalid"))
        if error.get("type") == "json_invalid":
            found.append(FieldError("body", "Body is not valid JSON."))
            continue
        if error.get("type") == "nul_character":  # raised for a whole model: its context names the field
            location = (*location, str(context.get("field", "")))
        if error.get("type") == "string_pattern_mismatch":
            message = pattern_message(str(context.get("pattern", "")))
        if error.get("type") == "extra_forbidden" and model is not None and len(location) > model_at:
            likely = nearest(str(location[-1]), known_fields(model, location[model_at:-1]))
            message += f"; did you mean `{likely}`?" if likely else ""
        found.append(FieldError(_field_path(location), message[:MAX_MESSAGE]))
    return found, len(every)


def _body_problem(request: Request, exc: RequestValidationError) -> tuple[ErrorCode, str] | None:
    """The code and detail when the body as a whole is unusable: not JSON at all (415), unparsable or absent (400)."""
    if any(error.get("type") == "json_invalid" for error in exc.errors()):
        return "malformed_body", "The body is not valid JSON."
    if not any(tuple(error.get("loc", ())) == ("body",) for error in exc.errors()):
        return None
    if isinstance(exc.body, bytes):  # FastAPI parses only a JSON media type and hands anything else over raw
        content_type = request.headers.get("content-type")
        sent = f"`{content_type}`" if content_type else "without a `Content-Type`"
        return "unsupported_media_type", f"The body was sent {sent}; send it as `application/json`."
    if exc.body is None:
        return "malformed_body", "The body is empty or `null`; send a JSON object."
    return None


def _body_model(request: Request) -> type[BaseModel] | None:
    """The model of the route's JSON body, if it has one (for the did-you-mean of an unknown field)."""
    route = request.scope.get("route")
    body_field = getattr(route, "body_field", None)
    annotation = getattr(getattr(body_field, "field_info", None), "annotation", None)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _allowed_methods(request: Request) -> str:
    """Every method some route takes on this path: Starlette's 405 names only the first route's (GET and POST on one
    path are two routes)."""
    allowed = [
        method
        for method in HTTP_METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL for route in request.app.router.routes
        )
    ]
    return ", ".join(allowed)


MEBIBYTE = 1024 * 1024


def too_large_detail(max_body_bytes: int, advice: str = "") -> str:
    """A 413's detail: the body limit in force, and what to do where there is more to say than "send less"."""
    if max_body_bytes % MEBIBYTE == 0:
        limit = f"{max_body_bytes // MEBIBYTE} MiB"
    else:
        limit = f"{max_body_bytes} bytes"
    return f"The request body exceeds the size limit ({limit}){f'; {advice}' if advice else ''}."


STATUS_CODES: dict[int, ErrorCode] = {
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}
"""The code of a plain HTTP error Starlette raises (no route, wrong method, body too large)."""


def install_error_handlers(app: FastAPI, problems: Problems) -> None:
    """Every error a route raises, answered as a problem by `problems`."""
    from fastapi.exceptions import RequestValidationError  # here: importers of the errors need not load FastAPI

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return problems.response(
            request.scope,
            exc.code,
            detail=str(exc.detail),
            errors=exc.errors,
            error_count=exc.error_count,
            headers=exc.headers,
            extensions=exc.extensions,
        )

    async def invalid_fields(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, InvalidFields)
        return await api_error(request, invalid_fields_error(exc))

    async def http_exception(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        code: ErrorCode = STATUS_CODES.get(
            exc.status_code, "validation_failed" if 400 <= exc.status_code < 500 else "internal_error"
        )
        detail = exc.detail if isinstance(exc.detail, str) and exc.status_code not in (404, 405) else None
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = _allowed_methods(request)
        return problems.response(request.scope, code, detail=detail, headers=headers)

    async def validation(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors, total = validation_errors(exc, _body_model(request))
        body_problem = _body_problem(request, exc)
        if body_problem is not None:
            code, detail = body_problem
            return problems.response(request.scope, code, detail=detail, errors=errors, error_count=total)
        detail = errors_detail(errors, total)
        return problems.response(request.scope, "validation_failed", detail=detail, errors=errors, error_count=total)

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(InvalidFields, invalid_fields)
    app.add_exception_handler(StarletteHTTPException, http_exception)
    app.add_exception_handler(RequestValidationError, validation)
