"""The verdict travels as a frozen dataclass from the view that builds it to the bytes of the answer: no response
model validates it on the hot path, and what it writes is what the response schemas describe."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import pytest
from httpx import AsyncClient
from pydantic import BaseModel

from compliance_api.classify import endpoints
from compliance_api.classify.schemas import (
    ClassificationRecord,
    CrossBorderDryRunVerdict,
    CrossBorderVerdict,
    ZWDryRunVerdict,
    ZWVerdict,
)
from compliance_api.classify.verdict_body import CrossBorderVerdictBody, ZWVerdictBody
from tests.classify.conftest import Account

ZW = "/v1/classify/zelfstandigenwet"
CB = "/v1/classify/cross-border"
CASES = {
    "Dutch": (ZW, {"engagement": {"hourly_rate_eur": 37, "months_duration": 12}}, ZWVerdictBody),
    "cross-border": (CB, {"country": "FR", "criteria": {"client_gives_orders": True}}, CrossBorderVerdictBody),
}
MODELS: dict[tuple[str, str], type[BaseModel]] = {
    (ZW, ""): ZWVerdict,
    (ZW, "/dry-run"): ZWDryRunVerdict,
    (CB, ""): CrossBorderVerdict,
    (CB, "/dry-run"): CrossBorderDryRunVerdict,
}


class CountingValidator:
    """A model's validator that counts the validations it runs, then runs them."""

    def __init__(self, validator: Any) -> None:
        self.validator = validator
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.validator, name)
        if not name.startswith("validate_"):
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return found(*args, **kwargs)

        return counted


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> dict[str, CountingValidator]:
    """The validations the verdict's response models run, by model."""
    counting = {}
    models: list[type[BaseModel]] = [*MODELS.values(), ClassificationRecord]
    for model in models:
        counting[model.__name__] = CountingValidator(model.__pydantic_validator__)
        monkeypatch.setattr(model, "__pydantic_validator__", counting[model.__name__])
    return counting


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """What the classify endpoints hand to orjson to write as the answer."""
    seen: list[object] = []
    dumps = orjson.dumps

    class Recording:
        @staticmethod
        def dumps(value: object, *args: Any, **kwargs: Any) -> bytes:
            seen.append(value)
            return dumps(value, *args, **kwargs)

    monkeypatch.setattr(endpoints, "orjson", Recording)
    return seen


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("suffix", ["", "/dry-run"])
async def test_a_verdict_reaches_the_answer_as_its_dataclass_and_no_response_model_validates_it(
    client: AsyncClient,
    account: Account,
    validations: dict[str, CountingValidator],
    answered: list[object],
    case: str,
    suffix: str,
) -> None:
    path, body, typed = CASES[case]
    model = MODELS[path, suffix]
    response = await client.post(path + suffix, json=body, headers=account.live)
    assert response.status_code == 200, response.text
    [written] = answered
    assert type(written) is typed, "the endpoint writes the view's dataclass itself"
    assert not isinstance(written, BaseModel)
    assert {name: counted.calls for name, counted in validations.items()} == dict.fromkeys(validations, 0)
    assert orjson.dumps(written) == response.content
    model.model_validate_json(response.content)  # and the schema the contract gives describes it
    assert validations[model.__name__].calls == 1, "the counting sees a validation when there is one"


def test_a_verdict_lists_its_opening_fields_then_its_closing_ones_and_is_frozen() -> None:
    """The order the answer is written in: the test's own fields, then those both verdicts end with."""
    for typed, first, last in (
        (ZWVerdictBody, "unanswered", "decided_by"),
        (CrossBorderVerdictBody, "criteria", "decided_by"),
    ):
        names = [field.name for field in dataclasses.fields(typed)]
        assert names[0] == "id"
        assert names[-1] == "livemode"
        assert names.index(first) + 1 == names.index(last)
        assert typed.__dataclass_params__.frozen  # type: ignore[union-attr]
