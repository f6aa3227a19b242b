"""The dated OpenAPI 3.1 contract: FastAPI's generated schema plus what every `/v1` operation shares.

Security, the statuses every operation can return (400 instead of FastAPI's 422, 401, 429, 431, 500, 503) and the
response headers (`X-Request-Id`, `X-RateLimit-*`) are added here in one pass, so no route can forget them.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import BaseModel

from compliance_api import CONTRACT_VERSION
from compliance_api.auth.tokens import TOKEN_PATTERN
from compliance_api.classify.schemas import BatchRequest
from compliance_api.config import Settings
from compliance_api.errors import ERROR_CATALOGUE, MAX_LISTED_ERRORS
from compliance_api.kit.addresses import DEFAULT_HOST, DEFAULT_PORT, Bases, listening_bases
from compliance_api.kit.deprecation import OPENAPI_KEY as DEPRECATION_KEY
from compliance_api.openapi.examples import add_operation_examples
from compliance_api.openapi.problems import add_problem_examples
from compliance_api.wtta.fixtures import SANDBOX_TABLE

RETAINED_SCHEMAS: tuple[type[BaseModel], ...] = (BatchRequest,)
"""Components no operation takes any more, kept because code generated from the dated contract names them."""

TITLE = "Compliance API"
API_PREFIXES = ("/v1/", "/api/v1/")
METHODS = ("get", "post", "put", "patch", "delete")

DESCRIPTION = f"""Compliance checks for freelancer engagements, for HR, payroll, recruiting and accounting systems.

The guide (first requests, authentication, errors, rate limits, webhooks, generated clients, operations) is served by
this deployment at [/guide/](/guide/). Every change of this contract, additive or breaking, is listed by date in the
[changelog](/guide/changelog/); a deprecated operation keeps answering for at least 90 days before its sunset.

## Environments
One deployment serves production and the sandbox, each at its own base URL (`servers`). Hosts listed in
`COMPLIANCE_SANDBOX_HOSTS` (default `sandbox.localhost`) are the sandbox, every other host is production; and where
`serve` also listens on a sandbox port (`COMPLIANCE_SANDBOX_PORT`; a default installation: production at
`http://127.0.0.1:8000`, the sandbox at `http://127.0.0.1:8001`), every request on that port is the sandbox, so a
client reaches it by its base URL alone. Sandbox data is test data only and is deleted after at most 30 days.

## Sandbox fixtures
Fixed test data, recreated by `compliance-api demo` and kept by the sandbox purge. `GET /v1/wtta/lookup` in the
sandbox answers these KvK numbers (their `source` says they are test data):

{SANDBOX_TABLE}

## Authentication
Every `/v1` operation needs `Authorization: Bearer <token>`. Tokens look like `sk_live_…` (production) or `sk_test_…`
(sandbox): the prefix, 32 base62 characters and a 6-character checksum (regex `{TOKEN_PATTERN}`). A token works only in
its own environment (401 `wrong_environment` otherwise). Tokens are stored as hashes and shown once, at creation.

## Rate limits
A bucket per user and environment, shared by all of the user's tokens there, refilled at the tier's rate:

| tier | requests per minute | burst |
|---|---|---|
| sandbox (every `sk_test_` token) | 60 | 120 |
| free | 60 | 120 |
| pro (pro and team plans) | 600 | 1200 |
| partner | 3000 | 6000 |

Every authenticated response carries `X-RateLimit-Limit` (the burst), `X-RateLimit-Remaining` (how many further
requests would succeed now), `X-RateLimit-Reset` (seconds until the bucket is full) and `RateLimit-Policy`. A 429 adds
`Retry-After` (seconds); back off exponentially.

## Classifiers
Verdicts are `safe` < `risky` < `unsafe`. Each comes from a versioned ruleset (returned as `ruleset`) that cites the
law for every criterion; `as_of` judges under the rules and thresholds in force on a date. Turning an employment
indicator on never gives a safer verdict or a lower score. Every verdict is kept as an audit record
(`GET /v1/classifications/{{id}}`, for the account that asked, in the same environment) for 7 years in production
and 30 days in the sandbox. The verdicts are an indication for due diligence, not legal advice.

## Passports
A freelancer reads their own passport with their own token (`GET /v1/passport`, also at `/api/v1/passport`); a
business token gets 403 `freelancer_only`, a freelancer without a passport 404 `no_passport`. `compliance_score` is the
sum of the catalogue weights of the valid verifications (KvK registration 25, VAT number 15, identity 25, professional
liability insurance 20, certificate of conduct 15); `compliance_level` is `none` (0), `low` (≥ 1), `medium` (≥ 40) or
`high` (≥ 75); `verified` needs a valid identity check and KvK registration. The freelancer creates share-tokens
(`pst_…`, shown once, stored as a keyed hash, expiring, revocable). Any account verifies one with
`GET /v1/passport/{{token}}/verify`: unknown, expired and revoked tokens answer the same 404 `share_not_found`, and each
verification is recorded for the freelancer (`GET /v1/passport/shares/{{id}}/views`). The summary carries
`jws_signature`, a compact JWS (`alg` EdDSA, Ed25519, `kid` in the header) whose payload is the summary's other fields;
the public keys are at `/.well-known/jwks.json` of the same host (production and sandbox sign with different keys,
and retired keys stay published).

## Idempotency
POSTs that create something accept `Idempotency-Key` (1–255 printable ASCII characters). For 24 hours a retry with the
same key and body replays the first response with `Idempotent-Replayed: true`; the same key with another body is 409
`idempotency_mismatch`, and while the first request is still running 409 `idempotency_in_progress`. A request that
fails does not keep its key.

## Errors
Errors are RFC 9457 `application/problem+json` with a stable `code` and the `request_id` (also in `X-Request-Id`):

| code | status | meaning |
|---|---|---|
""" + "\n".join(f"| `{s.code}` | {s.status} | {s.description} |" for s in ERROR_CATALOGUE.values())


def _header(description: str, schema: dict[str, Any], *, required: bool = False) -> dict[str, Any]:
    return {"description": description, "required": required, "schema": schema}


COMPONENT_HEADERS: dict[str, Any] = {
    "X-Request-Id": _header("The request's id; quote it to support.", {"type": "string"}, required=True),
    "X-RateLimit-Limit": _header("Bucket capacity (the tier's burst).", {"type": "integer", "minimum": 0}),
    "X-RateLimit-Remaining": _header(
        "Further requests that would succeed right now.", {"type": "integer", "minimum": 0}
    ),
    "X-RateLimit-Reset": _header("Seconds until the bucket is full again.", {"type": "integer", "minimum": 0}),
    "RateLimit-Policy": _header('The tier, e.g. `"free";q=60;w=60;burst=120`.', {"type": "string"}),
    "Retry-After": _header("Whole seconds to wait before retrying.", {"type": "integer", "minimum": 1}, required=True),
    "WWW-Authenticate": _header("RFC 6750 bearer challenge.", {"type": "string"}, required=True),
}

PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "Problem",
    "type": "object",
    "description": "RFC 9457 problem details with a stable `code`.",
    "required": ["type", "title", "status", "detail", "code", "request_id"],
    "properties": {
        "type": {"type": "string", "description": "URI of the error's documentation page."},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "code": {"type": "string", "enum": list(ERROR_CATALOGUE)},
        "request_id": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {"$ref": "#/components/schemas/FieldError"},
            "maxItems": MAX_LISTED_ERRORS,
            "description": "The offending fields, at most the first 20.",
        },
        "error_count": {
            "type": "integer",
            "minimum": 0,
            "description": "How many fields were at fault, when more than `errors` lists.",
        },
    },
}
FIELD_ERROR_SCHEMA: dict[str, Any] = {
    "title": "FieldError",
    "type": "object",
    "required": ["field", "message"],
    "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
}

DEPRECATION_HEADERS: dict[str, Any] = {
    "Deprecation": _header(
        "RFC 9745: when the operation was deprecated, `@<unix seconds>`.", {"type": "string", "pattern": "^@[0-9]+$"}
    ),
    "Sunset": _header("RFC 8594: the HTTP-date after which the operation may stop answering.", {"type": "string"}),
    "Link": _header('The deprecation notice: `<url>; rel="deprecation"`.', {"type": "string"}),
}
UNROUTED_STATUSES = ("401", "413", "429", "431", "503")  # answered before the route runs: no deprecation headers

RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy")


def _problem(description: str, headers: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {name: {"$ref": f"#/components/headers/{name}"} for name in ("X-Request-Id", *headers)},
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }


def _shared_responses(operation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    shared = {
        "401": _problem(
            "Missing, malformed, unknown or revoked token, or a token of the other environment.",
            ("WWW-Authenticate",),
        ),
        "429": _problem("Rate limit exceeded.", (*RATE_HEADERS, "Retry-After")),
        "431": _problem(
            "The request line and headers are over the size limit (`headers_too_large`), a long query string "
            "included; the connection closes."
        ),
        "500": _problem("Internal error.", RATE_HEADERS),
        "503": _problem("The database cannot be reached.", ("Retry-After",)),
    }
    shared["400"] = _problem(
        "Validation failed; `errors` lists each offending field (the first 20, and `error_count` when there were "
        "more), a query parameter the operation does not take or one given twice included.",
        RATE_HEADERS,
    )
    if operation.get("requestBody"):
        shared["400"] = _problem(
            "Validation failed (`validation_failed`; `errors` lists each offending field: the first 20, and "
            "`error_count` when there were more; an unknown query parameter or one given twice included), or the "
            "body is not valid JSON or is empty (`malformed_body`).",
            RATE_HEADERS,
        )
        shared["413"] = _problem("Body larger than 1 MiB.")
        shared["415"] = _problem("The body is not sent as `application/json` (`unsupported_media_type`).", RATE_HEADERS)
    return shared


def contract_servers(bases: Bases) -> list[dict[str, str]]:
    """Production, then the sandbox, each where it is reached from the address asked."""
    servers = []
    if bases.production is not None:
        servers.append({"url": bases.production, "description": "Production: `sk_live_` tokens."})
    if bases.sandbox is not None:
        servers.append({"url": bases.sandbox, "description": "Sandbox: `sk_test_` tokens and the documented fixtures."})
    return servers


_DEFAULTS = Settings.model_construct()
DEFAULT_SERVERS = contract_servers(
    listening_bases(
        "", DEFAULT_HOST, DEFAULT_PORT, _DEFAULTS.sandbox_port_beside(DEFAULT_PORT), _DEFAULTS.sandbox_hosts
    )
)
"""A default installation's (`make run`): production on port 8000, the sandbox on 8001."""


def _decorate_operation(operation: dict[str, Any], components: dict[str, Any]) -> None:
    operation["security"] = [{"bearerAuth": []}]
    responses: dict[str, Any] = operation.setdefault("responses", {})
    responses.pop("422", None)
    for status, response in _shared_responses(operation).items():
        existing = responses.get(status)
        if existing is None:
            responses[status] = response
        else:  # a route's own answer keeps its description and examples
            content = existing.setdefault("content", {})
            for media, body in response["content"].items():
                content.setdefault(media, {}).update(body)
    for status, response in responses.items():
        headers = response.setdefault("headers", {})
        headers.setdefault("X-Request-Id", {"$ref": "#/components/headers/X-Request-Id"})
        if status not in ("401", "413", "431", "503"):
            for name in RATE_HEADERS:
                headers.setdefault(name, {"$ref": f"#/components/headers/{name}"})
    operation["responses"] = dict(sorted(responses.items()))
    add_operation_examples(operation)
    add_problem_examples(operation, components)
    if operation.get("deprecated") and DEPRECATION_KEY in operation:
        _document_deprecation(operation)


def _document_deprecation(operation: dict[str, Any]) -> None:
    """A deprecated operation's notice in its description, and its deprecation headers on the routed responses."""
    notice = operation[DEPRECATION_KEY]
    text = f"**Deprecated** since {notice['since']}; sunset {notice['sunset']}; see {notice['link']}."
    operation["description"] = f"{operation['description']}\n\n{text}" if operation.get("description") else text
    for status, response in operation["responses"].items():
        if status not in UNROUTED_STATUSES:
            response["headers"].update(deepcopy(DEPRECATION_HEADERS))


def build_contract(app: FastAPI) -> dict[str, Any]:
    """The contract as frozen: its `servers` are a default installation's (the served copies say the deployment's)."""
    schema = get_openapi(
        title=TITLE,
        version=CONTRACT_VERSION,
        openapi_version="3.1.0",
        description=DESCRIPTION,
        servers=DEFAULT_SERVERS,
        routes=app.routes,
        webhooks=app.webhooks.routes,
        tags=[
            {"name": "health", "description": "Service status."},
            {"name": "wtta", "description": "The WTTA admission register cache (labour-supplier admissions)."},
        ],
    )
    _restore_examples(schema, app)
    components = schema.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas["Problem"] = PROBLEM_SCHEMA
    schemas["FieldError"] = FIELD_ERROR_SCHEMA
    for model in RETAINED_SCHEMAS:
        schemas.setdefault(model.__name__, model.model_json_schema(ref_template="#/components/schemas/{model}"))
    _hoist_variants(schemas)
    components["headers"] = deepcopy(COMPONENT_HEADERS)
    components["securitySchemes"] = {
        "bearerAuth": {
            "type": "http",
            "scheme": "bearer",
            "description": "An API token: `sk_live_…` on the production host, `sk_test_…` on the sandbox host.",
        }
    }
    for item in schema.get("webhooks", {}).values():  # FastAPI's 422 refers to the schema removed above
        for operation in item.values():
            operation.get("responses", {}).pop("422", None)
    for path, item in schema.get("paths", {}).items():
        if path.startswith(API_PREFIXES):
            for method in METHODS:
                if method in item:
                    _decorate_operation(item[method], components)
    return dict(schema)


def _hoist_variants(schemas: dict[str, Any]) -> None:
    """Give every inline `oneOf` variant (and each object it holds) a component of its own, named by its title.

    Client generators name inline schemas themselves and collide (openapi-python-client generated two
    `CrossBorderRequestFRCriteria` models and dropped the operation's module); a `$ref` per variant, with a
    discriminator when the variants share a constant property, generates one model each.
    """
    for name in list(schemas):
        variants = schemas[name].get("oneOf", [])
        if not variants or not all(isinstance(v, dict) and "title" in v and "$ref" not in v for v in variants):
            continue
        references = []
        for variant in variants:
            title = variant["title"]
            for prop, value in variant.get("properties", {}).items():
                if value.get("type") == "object" and "properties" in value:
                    component = title + prop.title().replace("_", "")
                    schemas[component] = {"title": component, **value}
                    variant["properties"][prop] = {"$ref": f"#/components/schemas/{component}"}
            schemas[title] = variant
            references.append(f"#/components/schemas/{title}")
        schemas[name]["oneOf"] = [{"$ref": reference} for reference in references]
        tag = _constant_property(variants)
        if tag is not None:
            mapping = {v["properties"][tag]["const"]: ref for v, ref in zip(variants, references, strict=True)}
            schemas[name]["discriminator"] = {"propertyName": tag, "mapping": mapping}


def _constant_property(variants: list[dict[str, Any]]) -> str | None:
    """A property every variant fixes to its own constant (the discriminator), if there is one."""
    for prop in variants[0].get("properties", {}):
        if all("const" in v.get("properties", {}).get(prop, {}) for v in variants):
            return str(prop)
    return None


def _restore_examples(schema: dict[str, Any], app: FastAPI) -> None:
    """Put back the nulls `get_openapi` strips (it encodes with `exclude_none`) from the routes' examples: an example
    with a required nullable field missing would not validate against its own schema."""
    paths = schema.get("paths", {})
    for context in iter_route_contexts(app.routes):  # included routers are not flattened into app.routes
        route = context.original_route
        if isinstance(route, APIRoute) and route.openapi_extra:
            for method in route.methods or ():
                operation = paths.get(context.path_format, {}).get(method.lower())
                if operation is not None:
                    _copy_examples(route.openapi_extra, operation)


def _copy_examples(source: dict[str, Any], target: dict[str, Any]) -> None:
    for key, value in source.items():
        if key in ("example", "examples"):
            target[key] = deepcopy(value)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _copy_examples(value, target[key])
