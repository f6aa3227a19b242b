"""Example problem answers for every 4xx an operation documents, one per error code its description names."""

from __future__ import annotations

import re
from typing import Any

from compliance_api.errors import ERROR_CATALOGUE, ErrorSpec, example_problem
from compliance_api.kit.patterns import pattern_message

PROBLEM_MEDIA = "application/problem+json"
CODE = re.compile(r"`([a-z0-9_]+)`")
# The codes shown for a status whose description names none.
DEFAULT_CODES: dict[int, tuple[str, ...]] = {
    400: ("validation_failed",),
    401: ("missing_token", "wrong_environment"),
    403: ("forbidden",),
    404: ("not_found",),
    409: ("idempotency_mismatch", "idempotency_in_progress"),
}
SPECS: dict[str, ErrorSpec] = {str(code): spec for code, spec in ERROR_CATALOGUE.items()}


def add_problem_examples(operation: dict[str, Any], components: dict[str, Any]) -> None:
    """Give every 4xx answer the problem+json content (some routes document only a description) and examples."""
    for status, response in operation["responses"].items():
        if not status.startswith("4"):
            continue
        content = response.setdefault("content", {})
        media = content.setdefault(PROBLEM_MEDIA, {"schema": {"$ref": "#/components/schemas/Problem"}})
        if "example" in media or "examples" in media:
            continue
        media["examples"] = {
            code: {"summary": SPECS[code].title, "value": _example(code, operation, components)}
            for code in _codes(int(status), response.get("description", ""))
        }


def _codes(status: int, description: str) -> list[str]:
    named = [
        code for code in dict.fromkeys(CODE.findall(description)) if code in SPECS and SPECS[code].status == status
    ]
    if named:
        return named
    if status in DEFAULT_CODES:
        return list(DEFAULT_CODES[status])
    return [code for code, spec in SPECS.items() if spec.status == status][:1]


def _example(code: str, operation: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    if code == "validation_failed":
        field, message = _invalid_field(operation, components)
        return example_problem(code, f"{field}: {message}", [{"field": field, "message": message}])
    if code in ("malformed_body", "unsupported_media_type"):
        return example_problem(code, errors=[{"field": "body", "message": "Body is not valid JSON."}])
    return example_problem(code)


def _invalid_field(operation: dict[str, Any], components: dict[str, Any]) -> tuple[str, str]:
    """A field of this operation and what the API says when it is wrong: a missing required body field, else a
    malformed path parameter, else an out-of-range or missing query parameter."""
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    if "$ref" in body:
        body = components["schemas"][body["$ref"].rsplit("/", 1)[-1]]
    if body.get("required"):
        return body["required"][0], "Field required"
    parameters = [p for p in operation.get("parameters", []) if p["in"] in ("path", "query")]
    for parameter in sorted(parameters, key=lambda p: p["in"] != "path"):
        schema, field = parameter["schema"], f"{parameter['in']}.{parameter['name']}"
        if schema.get("format") == "uuid":
            return field, "Input should be a valid UUID, invalid character: found `x` at 0"
        if "pattern" in schema:
            return field, pattern_message(schema["pattern"])
        if "minimum" in schema:
            return field, f"Input should be greater than or equal to {schema['minimum']}"
        if parameter.get("required"):
            return field, "Field required"
    return "body", "Input should be a valid dictionary or object to extract fields from"
