"""Batch classification: up to 1000 requests in one call, each item validated and scored on its own, all verdicts
kept in one group commit."""

from __future__ import annotations

import datetime as dt
import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import orjson
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from compliance_api.auth.caller import Caller
from compliance_api.classify.language import Language
from compliance_api.classify.ruleset import Rulesets
from compliance_api.classify.service import Scored, audit_rows
from compliance_api.classify.verdict_body import VerdictBody, unkept
from compliance_api.errors import (
    ERROR_CATALOGUE,
    MAX_LISTED_ERRORS,
    ApiError,
    ErrorCode,
    FieldError,
    errors_detail,
    validation_errors,
)
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit, TableRow

BodyT = TypeVar("BodyT", bound=BaseModel)
Scorer = Callable[[BodyT, Rulesets, dt.datetime, Language, Environment], Scored]

PATHS = frozenset({"/v1/classify/zelfstandigenwet/batch", "/v1/classify/cross-border/batch"})
"""The batch operations, whose 413 says what to do about a body over the limit."""
TOO_LARGE_ADVICE = "split the batch into several requests, each body within the limit"

ITEM_PROBLEM_BYTES = 1024
"""An item's problem takes at most this much in a keyed batch's record, compressed (its field errors are cut to fit):
the record, which keeps the problems as answered, stays within 1 kB an item whatever the items hold."""

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
    index: int, code: ErrorCode, detail: str | None, errors: Sequence[FieldError], total: int, base_url: str
) -> dict[str, Any]:
    """An item's problem: as many of its first `MAX_LISTED_ERRORS` field errors as keep it within
    `ITEM_PROBLEM_BYTES` (see `fits`), `error_count` when some are left out, and `detail` (by default made of the
    errors listed)."""
    spec = ERROR_CATALOGUE[code]

    def listing(count: int) -> dict[str, Any]:
        listed = errors[:count]
        problem: dict[str, Any] = {
            "index": index,
            "type": f"{base_url}/errors/{code}",
            "title": spec.title,
            "status": spec.status,
            "detail": detail or errors_detail(listed, total),
            "code": code,
            "errors": [{"field": error.field, "message": error.message} for error in listed],
        }
        if total > count:
            problem["error_count"] = total
        return problem

    fitting, over = 0, min(len(errors), MAX_LISTED_ERRORS) + 1  # listing(fitting) fits; listing(over) does not
    if fits(listing(over - 1)):
        return listing(over - 1)
    over -= 1
    while over - fitting > 1:  # bisect: a few compressions an item at most, whatever the errors hold
        middle = (fitting + over) // 2
        fitting, over = (middle, over) if fits(listing(middle)) else (fitting, middle)
    return listing(fitting)


def fits(problem: dict[str, Any]) -> bool:
    """Whether an item's problem is within `ITEM_PROBLEM_BYTES` as the idempotency record keeps it (compressed,
    `answers.VerdictReferences`); small ones are not compressed to find out."""
    body = orjson.dumps(problem)
    return len(body) <= ITEM_PROBLEM_BYTES or len(zlib.compress(body)) <= ITEM_PROBLEM_BYTES


def invalid_item(index: int, exc: ValidationError, model: type[BaseModel], base_url: str) -> dict[str, Any]:
    located = [{**error, "loc": ("body", "items", index, *error["loc"])} for error in exc.errors()]
    errors, total = validation_errors(RequestValidationError(located), model, model_at=3)
    return item_problem(index, "validation_failed", None, errors, total, base_url)


def _refused(index: int, exc: ApiError, base_url: str) -> dict[str, Any]:
    errors = [FieldError(f"items.{index}.{e.field}", e.message) for e in exc.errors]
    return item_problem(index, exc.code, str(exc.detail), errors, exc.error_count, base_url)


@dataclass(frozen=True, slots=True)
class BatchItems(Generic[BodyT]):
    """A batch's items as sent, and how each is validated (`model`) and scored for the caller."""

    caller: Caller
    items: Sequence[Any]
    model: type[BodyT]
    score: Scorer[BodyT]
    rulesets: Rulesets
    now: dt.datetime
    language: Language
    base_url: str

    def scored(self) -> list[Scored | dict[str, Any]]:
        """Each item scored, or its problem, in the order sent."""
        scored: list[Scored | dict[str, Any]] = []
        environment = self.caller.environment
        for index, item in enumerate(self.items):
            try:
                body = self.model.model_validate_json(_as_json(item))
                scored.append(self.score(body, self.rulesets, self.now, self.language, environment))
            except ValidationError as exc:
                scored.append(invalid_item(index, exc, self.model, self.base_url))
            except ApiError as exc:
                scored.append(_refused(index, exc, self.base_url))
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
    data: list[VerdictBody | dict[str, Any]] = []
    rows: list[TableRow] = []
    for entry in BatchItems(caller, items, model, score, rulesets, now, language, base_url).scored():
        if isinstance(entry, Scored):
            data.append(entry.verdict)
            rows.extend(audit_rows(caller, entry, now, request_id))
        else:
            data.append(entry)
    if rows:
        await audit.insert(*rows)
    return {"data": data}


def dry_run_batch(batch: BatchItems[BodyT]) -> dict[str, Any]:
    """`{"data": [...]}` as `classify_batch` answers it, with nothing kept: each verdict's `id` is null."""
    return {"data": [unkept(entry.verdict) if isinstance(entry, Scored) else entry for entry in batch.scored()]}
