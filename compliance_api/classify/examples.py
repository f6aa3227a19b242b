"""Example requests and responses for the contract, computed with the packaged rulesets (so they never drift)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from compliance_api.classify import batch, views
from compliance_api.classify.crossborder import assess_criteria
from compliance_api.classify.dutch import assess_engagement
from compliance_api.classify.language import Language
from compliance_api.classify.questions import Test, questionnaire
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.classify.verdict import Country
from compliance_api.classify.verdict_body import json_data
from compliance_api.config import Settings
from compliance_api.errors import PROBLEM_JSON, example_problem, too_large_detail

_AS_OF = dt.date(2026, 7, 9)
_CREATED_AT = dt.datetime(2026, 7, 9, 12, 0, tzinfo=dt.UTC)
_ID = uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e")

_ENGAGEMENT: dict[str, Any] = {
    "hourly_rate_eur": 95.0,
    "months_duration": 12,
    "days_per_week": 5,
    "other_clients_count": 0,
    "own_tools": True,
    "own_liability": True,
    "sets_own_hours": False,
    "can_delegate": False,
    "profit_risk": False,
}
_CRITERIA = {"client_gives_orders": True, "client_controls_execution": True, "client_can_sanction": True}


ACCEPT_LANGUAGE_PARAMETER: dict[str, Any] = {
    "name": "Accept-Language",
    "in": "header",
    "required": False,
    "description": "The language of the advice, rule reasons and criterion descriptions: `en`, `nl`, `fr` or `de`, "
    "chosen by q-value (`fr;q=0.5, de;q=0.9` is German; `nl-BE` is Dutch; `q=0` refuses a language). Anything "
    "else, `*` or no header: English. Legal terms stay in the language of the law.",
    "schema": {"type": "string", "examples": ["nl", "fr-BE, fr;q=0.9, en;q=0.5"]},
}
"""The header as a contract parameter, for routes that read it with `negotiate` (see `IDEMPOTENCY_KEY_PARAMETER`)."""

LANGUAGE_RESPONSE_HEADERS: dict[str, Any] = {
    "Content-Language": {
        "description": "The language the texts are written in: `en`, `nl`, `fr` or `de`.",
        "schema": {"type": "string", "enum": [language.code for language in Language]},
    },
    "Vary": {
        "description": "`Accept-Language`: the answer depends on it.",
        "schema": {"type": "string", "examples": ["Accept-Language"]},
    },
}
_LANGUAGE_NAMES = {Language.en: "English", Language.nl: "Dutch", Language.fr: "French", Language.de: "German"}


def _localised(responses: dict[Language, Any], summary: str) -> dict[str, Any]:
    """The 200 answer in each language, with the headers that name it."""
    return {
        "200": {
            "headers": LANGUAGE_RESPONSE_HEADERS,
            "content": {
                "application/json": {
                    "examples": {
                        language.code: {
                            "summary": f"{summary} ({_LANGUAGE_NAMES[language]}, `Accept-Language: {language.code}`)",
                            "value": response,
                        }
                        for language, response in responses.items()
                    }
                }
            },
        }
    }


def _operation(request: dict[str, Any], responses: dict[Language, Any], summary: str) -> dict[str, Any]:
    return {
        "requestBody": {
            "content": {"application/json": {"examples": {"example": {"summary": summary, "value": request}}}}
        },
        "responses": _localised(responses, summary),
    }


def _get_operation(response: dict[str, Any]) -> dict[str, Any]:
    return {"responses": {"200": {"content": {"application/json": {"example": response}}}}}


def _update_operation(request: dict[str, Any], response: dict[str, Any], summary: str) -> dict[str, Any]:
    return {
        "requestBody": {
            "content": {"application/json": {"examples": {"example": {"summary": summary, "value": request}}}}
        },
        **_get_operation(response),
    }


def _examples() -> tuple[dict[str, Any], ...]:
    rulesets = packaged_rulesets()
    dutch_request = {
        "engagement": _ENGAGEMENT,
        "as_of": _AS_OF.isoformat(),
        "reference": "contract-2026-0042",
        "metadata": {"cost_centre": "IT"},
        "monitor": True,
    }
    cross_border_request = {"country": "FR", "criteria": _CRITERIA, "as_of": _AS_OF.isoformat()}
    dutch_tracked = ZelfstandigenwetRequest.model_validate(dutch_request, strict=False)
    cross_border_tracked = CrossBorderRequest.model_validate(cross_border_request, strict=False)
    dutch_verdicts = {
        language: json_data(
            views.dutch_verdict(
                assess_engagement(rulesets.dutch, _ENGAGEMENT, _AS_OF, language),
                rulesets.dutch,
                rulesets.phrases,
                id=_ID,
                created_at=_CREATED_AT,
                tracked=dutch_tracked,
                livemode=True,
            )
        )
        for language in Language
    }
    cross_border_verdicts = {
        language: json_data(
            views.cross_border_verdict(
                assess_criteria(rulesets.cross_border[Country.FR], _CRITERIA, _AS_OF, language),
                rulesets.phrases,
                id=_ID,
                created_at=_CREATED_AT,
                tracked=cross_border_tracked,
                livemode=True,
            )
        )
        for language in Language
    }
    catalogues = {
        language: views.criteria_catalogue(rulesets.cross_border[Country.BE], language, livemode=True).model_dump(
            mode="json"
        )
        for language in Language
    }
    question_catalogues = {
        language: views.question_catalogue(
            questionnaire(rulesets, Test.NL, language), language, livemode=True
        ).model_dump(mode="json")
        for language in Language
    }
    dutch = dutch_verdicts[Language.nl]
    record = {
        "id": str(_ID),
        "kind": "zelfstandigenwet",
        "created_at": dutch["created_at"],
        "language": Language.nl.code,
        "reference": dutch["reference"],
        "metadata": dutch["metadata"],
        "monitor": dutch["monitor"],
        "verdict": dutch["verdict"],
        "history": [],
        "ruleset": dutch["ruleset"],
        "request": dutch_request,
        "result": dutch,
        "livemode": True,
    }
    return (
        _operation(
            dutch_request,
            dutch_verdicts,
            "A single-client IT contractor at EUR 95/h, full time for a year: risky, with the questions that decide it",
        ),
        _operation(
            cross_border_request,
            cross_border_verdicts,
            "Orders, control and sanction (Société Générale triad)",
        ),
        {"responses": _localised(catalogues, "The Belgian criteria")},
        {"responses": _localised(question_catalogues, "The questions of the Dutch test")},
        _get_operation(record),
        _update_operation({"monitor": False}, {**record, "monitor": False}, "Stop re-scoring this classification"),
        _get_operation(
            {
                "data": [
                    {
                        "id": str(_ID),
                        "kind": "zelfstandigenwet",
                        "country": None,
                        "verdict": dutch["verdict"],
                        "original_verdict": dutch["verdict"],
                        "ruleset": dutch["ruleset"],
                        "reference": dutch["reference"],
                        "metadata": dutch["metadata"],
                        "monitor": True,
                        "created_at": dutch["created_at"],
                        "livemode": True,
                    }
                ],
                "has_more": False,
                "next_cursor": None,
            }
        ),
    )


(
    ZELFSTANDIGENWET,
    CROSS_BORDER,
    CRITERIA,
    QUESTIONS,
    CLASSIFICATION,
    CLASSIFICATION_UPDATE,
    CLASSIFICATION_LIST,
) = _examples()


def _batch_of(single: dict[str, Any], bad_item: dict[str, Any], model: type[BaseModel], summary: str) -> dict[str, Any]:
    """A batch operation's examples from its single operation's: the example item and a bad one, answered by the
    example verdict (in each language) and the bad item's problem."""
    item = single["requestBody"]["content"]["application/json"]["examples"]["example"]["value"]
    answers = single["responses"]["200"]["content"]["application/json"]["examples"]
    try:
        model.model_validate_json(orjson.dumps(bad_item))
    except ValidationError as exc:
        problem = batch.invalid_item(1, exc, model, _BASE_URL)
    else:
        raise AssertionError("the bad example item of a batch must fail validation")
    verdicts = {language: answers[language.code]["value"] for language in Language}
    return _operation(
        {"items": [item, bad_item]},
        {language: {"data": [verdict, problem]} for language, verdict in verdicts.items()},
        summary,
    )


_BASE_URL = "https://api.example.com"
ZELFSTANDIGENWET_BATCH = _batch_of(
    ZELFSTANDIGENWET,
    {"engagement": {**_ENGAGEMENT, "hourly_rate_eur": -5}},
    ZelfstandigenwetRequest,
    "Two engagements, the second with a negative rate",
)
CROSS_BORDER_BATCH = _batch_of(
    CROSS_BORDER,
    {"country": "DE", "criteria": {"subject_to_instructions": "yes"}},
    CrossBorderRequest,
    "Two engagements, the second with a criterion that is not a boolean",
)


def _dry_run_of(kept: dict[str, Any]) -> dict[str, Any]:
    """A dry-run operation's examples from its kept operation's: the same requests, each verdict's `id` null."""

    def without_id(answer: dict[str, Any]) -> dict[str, Any]:
        if "data" in answer:
            return {"data": [item if "index" in item else {**item, "id": None} for item in answer["data"]]}
        return {**answer, "id": None}

    answers = kept["responses"]["200"]["content"]["application/json"]["examples"]
    dry = {code: {**example, "value": without_id(example["value"])} for code, example in answers.items()}
    ok = kept["responses"]["200"]
    return {**kept, "responses": {"200": {**ok, "content": {"application/json": {"examples": dry}}}}}


ZELFSTANDIGENWET_DRY_RUN = _dry_run_of(ZELFSTANDIGENWET)
CROSS_BORDER_DRY_RUN = _dry_run_of(CROSS_BORDER)
ZELFSTANDIGENWET_BATCH_DRY_RUN = _dry_run_of(ZELFSTANDIGENWET_BATCH)
CROSS_BORDER_BATCH_DRY_RUN = _dry_run_of(CROSS_BORDER_BATCH)

MAX_BODY_BYTES: int = Settings.model_fields["max_body_bytes"].default
BATCH_TOO_LARGE: dict[int | str, dict[str, Any]] = {
    413: {
        "description": "The body is larger than 1 MiB (`payload_too_large`): nothing is classified; split the batch "
        "into several requests.",
        "content": {
            PROBLEM_JSON: {
                "examples": {
                    "payload_too_large": {
                        "summary": "Payload too large",
                        "value": example_problem(
                            "payload_too_large", too_large_detail(MAX_BODY_BYTES, batch.TOO_LARGE_ADVICE)
                        ),
                    }
                }
            }
        },
    }
}
"""The batch operations' 413, with the detail they answer."""
