"""A verdict as the classify operations answer it: frozen dataclasses, built by `views` from an assessment and written
by `orjson` as they stand, field by field in the order declared here: the order the answers have always had, which
the stored verdicts keep (`ZWVerdict` lists its fields in it; `CrossBorderVerdict` lists a few in another).

Nothing validates them on the way out: the response models describe the answer in the contract, and the tests hold
these bodies against them (constructing the models per request cost a third of the endpoint's CPU). The audit trail
keeps their JSON, which a stored verdict is read back from.

Frozen, without slots: orjson writes a dataclass that has a `__dict__` straight from it, as fast as a dict, and one
with slots attribute by attribute (a Dutch verdict took 35 µs instead of 6).
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, replace
from typing import Any, Literal

import orjson

from compliance_api.classify.verdict import Country, Verdict

AnswerSetSearch = Literal["not_needed", "found", "none_would", "stopped"]
Value = bool | int | float


@dataclass(frozen=True)
class LegalBasisBody:
    text: str
    source_url: str | None


@dataclass(frozen=True)
class RulesetBody:
    id: str
    version: dt.date
    valid_from: dt.date


@dataclass(frozen=True)
class DecidingRuleBody:
    """A decisive rule that held, or `weighing` where the weight of the indicators decided."""

    rule: str
    verdict: Verdict
    reason: str
    legal_basis: LegalBasisBody


@dataclass(frozen=True)
class AnswerBody:
    """One answer of a next question, and the verdict it leads to."""

    answer: str
    value: Value
    verdict: Verdict


@dataclass(frozen=True)
class NextQuestionBody:
    field: str
    question: str
    answers: tuple[AnswerBody, ...]
    summary: str
    legal_basis: LegalBasisBody


@dataclass(frozen=True)
class SetAnswerBody:
    field: str
    answer: str
    value: Value


@dataclass(frozen=True)
class AnswerSetBody:
    """Answers that, given together, change a verdict no single answer changes."""

    answers: tuple[SetAnswerBody, ...]
    verdict: Verdict


@dataclass(frozen=True)
class WeighingBody:
    employment: int
    self_employment: int
    stated_facts: int
    floor: int


@dataclass(frozen=True)
class DutchThresholdBody:
    amount_eur: float
    valid_from: dt.date
    legal_status: str
    basis: str
    source_url: str | None


@dataclass(frozen=True)
class DutchCriterionBody:
    id: str
    group: str
    input: str
    weight: int
    legal_basis: LegalBasisBody
    answered: bool
    hit: bool


@dataclass(frozen=True)
class _Closing:
    """The fields both verdicts end with: what decided them and what could change them, the weighing, the caller's
    tracking, and when and where they were given. A base written after a verdict's opening fields (a dataclass lists
    its bases' fields from the last base to the first, then its own)."""

    decided_by: tuple[DecidingRuleBody, ...]
    deciding_facts: tuple[str, ...]
    next_questions: tuple[NextQuestionBody, ...]
    could_change: tuple[NextQuestionBody, ...]
    next_answer_sets: tuple[AnswerSetBody, ...]
    answer_set_search: AnswerSetSearch
    weighing: WeighingBody
    reference: str | None
    metadata: dict[str, str]
    monitor: bool
    created_at: str  # as the answer writes it: ISO 8601 in UTC with `Z`
    livemode: bool


@dataclass(frozen=True)
class _DutchOpening:
    id: uuid.UUID | None  # None in a dry run's answer: nothing is kept
    verdict: Verdict
    score: int
    ratio: float
    criteria_hit: tuple[str, ...]
    advice: str
    presumption_of_employment: bool
    tariefgrens: DutchThresholdBody | None
    as_of: dt.date
    ruleset: RulesetBody
    criteria: tuple[DutchCriterionBody, ...]
    unanswered: tuple[str, ...]


@dataclass(frozen=True)
class ZWVerdictBody(_Closing, _DutchOpening):
    """`ZWVerdict`: the Dutch test's verdict, its opening fields then its closing ones."""


@dataclass(frozen=True)
class RuleAppliedBody:
    verdict: Verdict
    reason: str


@dataclass(frozen=True)
class CrossBorderTariefgrensOut:  # the response schemas' own (no docstring: the contract describes none)
    value: float
    multiplier: float
    min_wage_hourly: float
    min_wage_valid_from: dt.date
    valid_from: dt.date
    basis: str
    source_url: str | None


@dataclass(frozen=True)
class CrossBorderCriterionBody:
    name: str
    group: str
    weight: int
    legal_basis: LegalBasisBody
    met: bool
    provided: bool


@dataclass(frozen=True)
class _CrossBorderOpening:
    id: uuid.UUID | None
    country: Country
    verdict: Verdict
    law: str
    tariefgrens_min_eur: float | None
    advice: str
    score: int
    criteria_met: tuple[str, ...]
    criteria_not_provided: tuple[str, ...]
    unanswered: tuple[str, ...]
    rules_applied: tuple[RuleAppliedBody, ...]
    tariefgrens: CrossBorderTariefgrensOut | None
    as_of: dt.date
    ruleset: RulesetBody
    criteria: tuple[CrossBorderCriterionBody, ...]


@dataclass(frozen=True)
class CrossBorderVerdictBody(_Closing, _CrossBorderOpening):
    """`CrossBorderVerdict`: the FR, DE or BE test's verdict, its opening fields then its closing ones."""


VerdictBody = ZWVerdictBody | CrossBorderVerdictBody


def unkept(verdict: VerdictBody) -> VerdictBody:
    """The verdict as a dry run answers it: with a null `id`, for nothing is kept."""
    return replace(verdict, id=None)


def json_data(verdict: VerdictBody) -> dict[str, Any]:
    """The verdict as JSON data, as a stored one reads back (for readers of JSON: the examples, the re-score's
    comparison, the dashboard's preview; not the answer's path, which writes the object itself)."""
    loaded: dict[str, Any] = orjson.loads(orjson.dumps(verdict))
    return loaded
