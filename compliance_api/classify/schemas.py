"""Request and response bodies of the classifiers and the audit trail.

Criterion ids and names come from the packaged rulesets, so the contract's enums are the rulesets' catalogue.
"""

from __future__ import annotations

import datetime as dt
import uuid
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints

from compliance_api.classify.language import Language, LanguageCode
from compliance_api.classify.models import ClassificationKind
from compliance_api.classify.ruleset import ENGAGEMENT_FIELDS, packaged_rulesets
from compliance_api.classify.verdict import Country, Verdict
from compliance_api.kit.pagination import Page
from compliance_api.kit.schemas import ACCEPT_WHOLE_FLOATS, IsoDate, RequestSchema, ResponseSchema

_RULESETS = packaged_rulesets()

if TYPE_CHECKING:
    DutchCriterionId = str
    CrossBorderCriterionName = str
    EngagementField = str
else:
    # Built from the ruleset files (mypy cannot follow a functional Enum with computed members).
    DutchCriterionId = StrEnum("DutchCriterionId", [(c.id, c.id) for c in _RULESETS.dutch.criteria])
    CrossBorderCriterionName = StrEnum(
        "CrossBorderCriterionName",
        [(name, name) for name in sorted({n for r in _RULESETS.cross_border.values() for n in r.criterion_names})],
    )
    EngagementField = StrEnum("EngagementField", [(name, name) for name in ENGAGEMENT_FIELDS])

AS_OF_DESCRIPTION = "Judge under the rules in force on this date (YYYY-MM-DD); default: today (UTC)."


MAX_METADATA_KEYS = 20
MetadataText = Annotated[str, StringConstraints(min_length=1, max_length=500)]
ClientMetadata = Annotated[
    dict[MetadataText, Annotated[str, StringConstraints(max_length=500)]],
    Field(
        max_length=MAX_METADATA_KEYS,
        description="Your own key-value pairs (at most 20; keys and values are strings of at most 500 characters), "
        "stored and returned with the verdict.",
    ),
]
ClientReference = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200),
    Field(description="Your own id for the engagement (at most 200 characters), stored and returned with the verdict."),
]
MONITOR_DESCRIPTION = (
    "Re-score this engagement when the law or its thresholds change, and send `classification.verdict_changed` "
    "when the verdict changes (default false)."
)


class Tracked(RequestSchema):
    """What a client attaches to a classification to find it again and to be told when its verdict changes."""

    reference: ClientReference | None = None
    metadata: ClientMetadata | None = None
    monitor: bool = Field(default=False, description=MONITOR_DESCRIPTION)


class Engagement(RequestSchema):
    """The engagement as the client knows it; every field is optional, and an unanswered one counts as not hit."""

    hourly_rate_eur: float | None = Field(
        default=None, ge=0, lt=10_000, allow_inf_nan=False, description="Hourly rate in EUR, excluding VAT."
    )
    months_duration: Annotated[int, Field(ge=0, le=600), ACCEPT_WHOLE_FLOATS] | None = Field(
        default=None, description="Expected length in months."
    )
    days_per_week: Annotated[int, Field(ge=0, le=7), ACCEPT_WHOLE_FLOATS] | None = Field(
        default=None, description="Days a week worked for this client."
    )
    other_clients_count: Annotated[int, Field(ge=0, le=100_000), ACCEPT_WHOLE_FLOATS] | None = Field(
        default=None, description="Number of the freelancer's other clients."
    )
    own_tools: StrictBool | None = Field(default=None, description="The freelancer works with their own tools.")
    own_liability: StrictBool | None = Field(
        default=None, description="The freelancer is liable for their own errors (and insured for it)."
    )
    sets_own_hours: StrictBool | None = Field(default=None, description="The freelancer sets their own hours.")
    can_delegate: StrictBool | None = Field(default=None, description="The freelancer may send a substitute.")
    profit_risk: StrictBool | None = Field(default=None, description="The freelancer bears profit or loss risk.")


class ZelfstandigenwetRequest(Tracked):
    engagement: Engagement
    as_of: IsoDate | None = Field(default=None, description=AS_OF_DESCRIPTION)


def _per_country_schema(schema: dict[str, Any]) -> None:
    """Publish one exact variant per country, so the contract lists each country's criterion names."""
    shared = {name: schema["properties"][name] for name in ("as_of", "reference", "metadata", "monitor")}
    variants = [
        {
            "title": f"CrossBorderRequest{country}",
            "type": "object",
            "properties": {
                "country": {"const": country.value},
                "criteria": {
                    "type": "object",
                    "description": f"{country} criteria: true marks an employment indicator; left out counts as false.",
                    "properties": {
                        c.name: {"type": "boolean", "description": c.description[Language.en]} for c in ruleset.criteria
                    },
                    "additionalProperties": False,
                },
                **shared,
            },
            "required": ["country", "criteria"],
            "additionalProperties": False,
        }
        for country, ruleset in _RULESETS.cross_border.items()
    ]
    schema.clear()
    schema.update({"title": "CrossBorderRequest", "oneOf": variants})


class CrossBorderRequest(Tracked, json_schema_extra=_per_country_schema):
    country: Country = Field(strict=False, description="FR, DE or BE.")  # strict mode takes only Enum instances
    criteria: dict[str, StrictBool] = Field(
        description="Criterion name to boolean; the allowed names depend on the country "
        "(`GET /v1/classify/cross-border/criteria`)."
    )
    as_of: IsoDate | None = Field(default=None, description=AS_OF_DESCRIPTION)


class RulesetRef(ResponseSchema):
    id: str
    version: dt.date
    valid_from: dt.date


class LegalBasis(ResponseSchema):
    text: str
    source_url: str


class DutchCriterionOut(ResponseSchema):
    id: DutchCriterionId
    group: Literal["self_employment", "work_relationship"]
    input: EngagementField
    answered: bool = Field(description="The input was given (unanswered inputs count as not hit).")
    hit: bool
    weight: int
    legal_basis: LegalBasis


class DutchTariefgrensOut(ResponseSchema):
    amount_eur: float
    valid_from: dt.date
    legal_status: Literal["consultation_draft", "draft_bill", "bill", "adopted_not_in_force", "in_force"]
    basis: str
    source_url: str


class ZWVerdict(ResponseSchema):
    id: uuid.UUID = Field(description="The audit record: `GET /v1/classifications/{id}`.")
    verdict: Verdict
    score: int = Field(ge=0, le=100, description="Sum of the weights of the criteria hit (0–100).")
    ratio: float = Field(ge=0, le=1, description="`score / 100`.")
    criteria_hit: list[DutchCriterionId]
    advice: str
    presumption_of_employment: bool = Field(
        description="The rate is at or below the tariefgrens in force on `as_of` (the verdict is then never safe)."
    )
    tariefgrens: DutchTariefgrensOut | None = Field(description="The threshold in force on `as_of`, if any.")
    as_of: dt.date
    ruleset: RulesetRef
    criteria: list[DutchCriterionOut]
    unanswered: list[EngagementField] = Field(
        description="The inputs not answered: counted as not hit, but the verdict is never `safe` while hitting "
        "them could make it `unsafe`; the advice says how answering them could change the verdict."
    )
    reference: str | None = Field(description="The `reference` sent with the request, if any.")
    metadata: dict[str, str] = Field(description="The `metadata` sent with the request (empty when none).")
    monitor: bool = Field(description="Whether the verdict is re-scored when the law changes.")
    created_at: dt.datetime


class CrossBorderTariefgrensOut(ResponseSchema):
    value: float
    multiplier: float
    min_wage_hourly: float
    min_wage_valid_from: dt.date
    valid_from: dt.date
    basis: str
    source_url: str


class CrossBorderCriterionOut(ResponseSchema):
    name: CrossBorderCriterionName
    group: str
    weight: int
    met: bool
    provided: bool
    legal_basis: LegalBasis


class AppliedRule(ResponseSchema):
    verdict: Verdict
    reason: str


class CrossBorderVerdict(ResponseSchema):
    id: uuid.UUID = Field(description="The audit record: `GET /v1/classifications/{id}`.")
    country: Country
    verdict: Verdict
    law: str
    tariefgrens_min_eur: float | None = Field(
        description="Our rate benchmark (2.5 x the statutory hourly minimum wage), not a legal threshold."
    )
    advice: str
    score: int = Field(ge=0, le=100, description="Weighted share of the criteria met (0–100).")
    criteria_met: list[CrossBorderCriterionName]
    criteria_not_provided: list[CrossBorderCriterionName] = Field(description="The same list as `unanswered`.")
    unanswered: list[CrossBorderCriterionName] = Field(
        description="The criteria not provided: counted as not met, but the verdict is never `safe` while meeting "
        "them could make it `unsafe`; the advice says how answering them could change the verdict."
    )
    rules_applied: list[AppliedRule]
    tariefgrens: CrossBorderTariefgrensOut | None
    as_of: dt.date
    ruleset: RulesetRef
    criteria: list[CrossBorderCriterionOut]
    reference: str | None = Field(description="The `reference` sent with the request, if any.")
    metadata: dict[str, str] = Field(description="The `metadata` sent with the request (empty when none).")
    monitor: bool = Field(description="Whether the verdict is re-scored when the law changes.")
    created_at: dt.datetime


class ClassificationSummary(ResponseSchema):
    id: uuid.UUID
    kind: ClassificationKind
    country: Country | None = Field(description="The cross-border test's country; null for the Dutch test.")
    verdict: Verdict = Field(description="The current verdict (after any re-score).")
    original_verdict: Verdict = Field(description="The verdict as first answered.")
    ruleset: RulesetRef
    reference: str | None
    metadata: dict[str, str]
    monitor: bool
    created_at: dt.datetime


class ClassificationList(Page[ClassificationSummary]):
    """A page of classifications, newest first."""


class ClassificationUpdate(RequestSchema):
    monitor: bool = Field(description=MONITOR_DESCRIPTION)


class CatalogueCriterion(ResponseSchema):
    name: CrossBorderCriterionName
    group: str
    weight: int
    description: str
    legal_basis: LegalBasis


class CatalogueRule(ResponseSchema):
    verdict: Verdict
    reason: str
    all_of: list[CrossBorderCriterionName]
    at_least: int | None
    of: list[CrossBorderCriterionName]
    share_at_least_percent: int | None


class CriteriaCatalogue(ResponseSchema):
    country: Country
    law: str
    source_note: str
    ruleset: RulesetRef
    criteria: list[CatalogueCriterion]
    rules: list[CatalogueRule]
    tariefgrens: list[CrossBorderTariefgrensOut]


class LaterVerdict(ResponseSchema):
    id: uuid.UUID
    verdict: Verdict
    previous_verdict: Verdict
    supersedes: uuid.UUID | None = Field(description="The later verdict this one replaced; null: the original one.")
    as_of: dt.date = Field(description="The date whose law and thresholds it applies.")
    ruleset: RulesetRef
    created_at: dt.datetime
    result: ZWVerdict | CrossBorderVerdict


class ClassificationRecord(ResponseSchema):
    id: uuid.UUID
    kind: ClassificationKind
    created_at: dt.datetime
    language: LanguageCode = Field(
        description="The language the verdict's texts are written in (negotiated from `Accept-Language`; re-scores "
        "keep it). Records made before languages existed are `en`."
    )
    reference: str | None
    metadata: dict[str, str]
    monitor: bool = Field(description="Re-scored when the law changes; switch it with PATCH.")
    verdict: Verdict = Field(description="The current verdict: the newest of `history`, else the original one.")
    history: list[LaterVerdict] = Field(
        description="Verdicts from re-scores that changed it, oldest first; `result` stays the original verdict."
    )
    ruleset: RulesetRef
    request: dict[str, Any] = Field(description="The request body as received.")
    result: ZWVerdict | CrossBorderVerdict


MAX_BATCH_ITEMS = 1000


class BatchRequest(BaseModel):
    """A batch of requests of the single endpoint's shape. Each item is validated on its own, so one bad item does
    not fail the others (a plain model, not a RequestSchema: the NUL check too is per item)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    items: list[Any] = Field(
        min_length=1,
        max_length=MAX_BATCH_ITEMS,
        description=f"1 to {MAX_BATCH_ITEMS} requests, each of the single endpoint's request shape "
        "(`ZelfstandigenwetRequest` or `CrossBorderRequest`). Each is validated on its own: an invalid item is "
        "answered by its own problem in `data`, not by a 400 for the batch.",
    )


class ItemProblem(ResponseSchema):
    """The problem of one batch item (RFC 9457 fields plus its index); the other items are classified anyway."""

    index: int = Field(description="The item's position in `items`, from 0.")
    type: str
    title: str
    status: int
    detail: str
    code: str
    errors: list[dict[str, str]] = Field(default_factory=list, description="Each offending field, as `items.N.…`.")


class ZelfstandigenwetBatchResult(ResponseSchema):
    data: list[ZWVerdict | ItemProblem] = Field(description="One entry per item, in the order sent.")


class CrossBorderBatchResult(ResponseSchema):
    data: list[CrossBorderVerdict | ItemProblem] = Field(description="One entry per item, in the order sent.")
