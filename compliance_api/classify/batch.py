"""Batch classification: up to 1000 requests in one call, each item validated and scored on its own, all verdicts
kept in one group commit."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from compliance_api.auth.caller import Caller
from compliance_api.classify.language import Language
from compliance_api.classify.ruleset import Rulesets
from compliance_api.classify.service import Scored, audit_rows, dry_run
from compliance_api.errors import ERROR_CATALOGUE, ApiError, ErrorCode, FieldError, validation_errors
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit, TableRow

BodyT = TypeVar("BodyT", bound=BaseModel)
Scorer = Callable[[BodyT, Rulesets, dt.datetime, Language, Environment], Scored]

PATHS = frozenset({"/v1/classify/zelfstandigenwet/batch", "/v1/classify/cross-border/batch"})
"""The batch operations, whose 413 says what to do about a body over the limit."""
TOO_LARGE_ADVICE = "split the batch into several requests, each body within the limit"

ITEMS_PER_TOKEN = 100
"""A batch costs one rate-limit token per started 100 items (one for the request itself, the rest on top)."""


def _as_json(item: Any) -> str:
    """An item back as the JSON it came as, for the single endpoint's JSON validation (strict, enums by value).

    The standard library, not orjson: the body was parsed by it, and only it writes back what it read: integers
    beyond 64 bits (orjson raises) and `NaN` (orjson writes `null`, which would pass as an unanswered field), both of
    which validation must then refuse by name."""
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def batch_cost(items: int) -> int:
    return -(-items // ITEMS_PER_TOKEN)


def item_problem(
    index: int, code: ErrorCode, detail: str, errors: Sequence[FieldError], base_url: str
) -> dict[str, Any]:
    spec = ERROR_CATALOGUE[code]
    return {
        "index": index,
        "type": f"{base_url}/errors/{code}",
        "title": spec.title,
        "status": spec.status,
        "detail": detail,
        "code": code,
        "errors": [{"field": error.field, "message": error.message} for error in errors],
    }


def invalid_item(index: int, exc: ValidationError, base_url: str) -> dict[str, Any]:
    located = [{**error, "loc": ("body", "items", index, *error["loc"])} for error in exc.errors()]
    errors = validation_errors(RequestValidationError(located))
    detail = "; ".join(f"{e.field}: {e.message}" for e in errors)
    return item_problem(index, "validation_failed", detail, errors, base_url)


def _refused(index: int, exc: ApiError, base_url: str) -> dict[str, Any]:
    errors = [FieldError(f"items.{index}.{e.field}", e.message) for e in exc.errors]
    return item_problem(index, exc.code, str(exc.detail), errors, base_url)


def _scored_items(
    caller: Caller,
    items: Sequence[Any],
    model: type[BodyT],
    score: Scorer[BodyT],
    rulesets: Rulesets,
    now: dt.datetime,
    language: Language,
    base_url: str,
) -> list[Scored | dict[str, Any]]:
    """Each item scored, or its problem, in the order sent."""
    scored: list[Scored | dict[str, Any]] = []
    for index, item in enumerate(items):
        try:
            scored.append(score(model.model_validate_json(_as_json(item)), rulesets, now, language, caller.environment))
        except ValidationError as exc:
            scored.append(invalid_item(index, exc, base_url))
        except ApiError as exc:
            scored.append(_refused(index, exc, base_url))
    return scored


async def classify_batch(
    audit: GroupCommit,
    caller: Caller,
    items: Sequence[Any],
    model: type[BodyT],
    score: Scorer[BodyT],
    rulesets: Rulesets,
    now: dt.datetime,
    language: Language,
    base_url: str,
    request_id: str | None = None,
) -> dict[str, Any]:
    """`{"data": [...]}`: each item's verdict (kept in the audit trail) or its problem, in the order sent."""
    data: list[dict[str, Any]] = []
    rows: list[TableRow] = []
    for entry in _scored_items(caller, items, model, score, rulesets, now, language, base_url):
        if isinstance(entry, Scored):
            data.append(entry.verdict)
            rows.extend(audit_rows(caller, entry, now, request_id))
        else:
            data.append(entry)
    if rows:
        await audit.insert(*rows)
    return {"data": data}


def dry_run_batch(
    caller: Caller,
    items: Sequence[Any],
    model: type[BodyT],
    score: Scorer[BodyT],
    rulesets: Rulesets,
    now: dt.datetime,
    language: Language,
    base_url: str,
) -> dict[str, Any]:
    """`{"data": [...]}` as `classify_batch` answers it, with nothing kept: each verdict's `id` is null."""
    scored = _scored_items(caller, items, model, score, rulesets, now, language, base_url)
    return {"data": [dry_run(entry) if isinstance(entry, Scored) else entry for entry in scored]}
