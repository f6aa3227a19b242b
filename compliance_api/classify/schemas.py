"""Request and response bodies of the classifiers and the audit trail.

Criterion ids and names come from the packaged rulesets, so the contract's enums are the rulesets' catalogue.
"""

from __future__ import annotations

import datetime as dt
import uuid
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, StrictBool, StringConstraints

from compliance_api.classify.batch_limit import MAX_BATCH_ITEMS
from compliance_api.classify.language import Language, LanguageCode
from compliance_api.classify.models import ClassificationKind
from compliance_api.classify.ruleset import ENGAGEMENT_FIELDS, packaged_rulesets
from compliance_api.classify.verdict import Country, Verdict
from compliance_api.classify.verdict_body import CrossBorderTariefgrensOut
from compliance_api.kit.pagination import Page
from compliance_api.kit.schemas import (
    ACCEPT_WHOLE_FLOATS,
    VALIDATED_PER_ITEM,
    FewUnknownFields,
    IsoDate,
    Livemode,
    RequestSchema,
    ResponseSchema,
)

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
    works_under_instructions: StrictBool | None = Field(
        default=None,
        description="The client decides how the work is done: binding instructions on its content and manner, beyond "
        "agreeing the result (Deliveroo circumstance (ii); art. 7:610 BW).",
    )
    client_supervises_work: StrictBool | None = Field(
        default=None,
        description="The client checks the work while it is done and can correct or sanction it (Deliveroo "
        "circumstance (ii); HR 30 Mar 2018, ECLI:NL:HR:2018:343).",
    )
    embedded_in_organisation: StrictBool | None = Field(
        default=None,
        description="The work and the worker are part of the client's organisation: its teams, rosters, procedures or "
        "systems, or presented as its staff (Deliveroo circumstance (iii)).",
    )
    structural_work: StrictBool | None = Field(
        default=None,
        description="The work is structural for the client (core or ongoing work), not a project with a defined "
        "result (Deliveroo circumstance (i)).",
    )
    same_work_as_employees: StrictBool | None = Field(
        default=None,
        description="Employees of the client do the same work (weighed, not decisive: HR 21 Feb 2025, "
        "ECLI:NL:HR:2025:319).",
    )
    terms_set_by_client: StrictBool | None = Field(
        default=None,
        description="The client set the contract terms and the pay alone; the freelancer could not negotiate them "
        "(Deliveroo circumstances (v) and (vi)).",
    )
    acts_as_entrepreneur: StrictBool | None = Field(
        default=None,
        description="The freelancer acts as an entrepreneur in the market: registered business, own acquisition, brand "
        "or reputation, investments (Deliveroo circumstance (ix); HR 21 Feb 2025, ECLI:NL:HR:2025:319).",
    )


DONT_KNOW_DESCRIPTION = (
    'The questions answered "don\'t know": they stay unanswered (never weighed), and the next questions no longer '
    "rank them first."
)


class ZelfstandigenwetRequest(Tracked):
    engagement: Engagement
    as_of: IsoDate | None = Field(default=None, description=AS_OF_DESCRIPTION)
    dont_know: list[Annotated[EngagementField, Strict(False)]] = Field(
        default_factory=list, max_length=50, description=DONT_KNOW_DESCRIPTION
    )


def _per_country_schema(schema: dict[str, Any]) -> None:
    """Publish one exact variant per country, so the contract lists each country's criterion names."""
    shared = {name: schema["properties"][name] for name in ("as_of", "reference", "metadata", "monitor", "dont_know")}
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
                "dont_know": {**shared["dont_know"], "items": {"enum": list(ruleset.criterion_names)}},
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
    dont_know: list[str] = Field(
        default_factory=list, max_length=50, description=DONT_KNOW_DESCRIPTION + " Criterion names, as in `criteria`."
    )


class RulesetRef(ResponseSchema):
    id: str
    version: dt.date
    valid_from: dt.date


class LegalBasis(ResponseSchema):
    text: str = Field(description="The citation: statute and article, or court, date and ECLI or case number.")
    source_url: str | None = Field(
        description="The cited text on its official publisher; null where it is not published online (the citation "
        "names it)."
    )


class DecidingRule(ResponseSchema):
    """A rule that decided the verdict: one of the ruleset's decisive rules, or `weighing` when the weight of the
    indicators decided it."""

    rule: str = Field(description="The decisive rule's id (`GET /v1/classify/questions` lists them), or `weighing`.")
    verdict: Verdict
    reason: str = Field(description="Why, in the language of the answer.")
    legal_basis: LegalBasis


class AnswerOut(ResponseSchema):
    answer: str = Field(description="The answer, in the language of the verdict: yes or no, or a range of numbers.")
    value: bool | int | float = Field(description="An answer that takes this branch, to send as the field's value.")
    verdict: Verdict = Field(description="The verdict with this answer and everything else as it is now.")


class NextQuestion(ResponseSchema):
    """An unanswered question, and where each of its answers leads."""

    field: str = Field(description="The request field that answers it.")
    question: str = Field(description="The question, in the language of the verdict.")
    answers: list[AnswerOut]
    summary: str = Field(description='Where each answer leads, in one line ("if yes: unsafe; if no: stays risky").')
    legal_basis: LegalBasis


class SetAnswerOut(ResponseSchema):
    field: str = Field(description="The request field that answers it.")
    answer: str = Field(description="The answer, in the language of the verdict: yes or no, or a range of numbers.")
    value: bool | int | float = Field(description="An answer that takes this branch, to send as the field's value.")


class AnswerSetOut(ResponseSchema):
    """Answers that, given together, change a `risky` verdict that no single answer changes."""

    answers: list[SetAnswerOut]
    verdict: Verdict = Field(description="The verdict with these answers and everything else as it is now.")


class WeighingOut(ResponseSchema):
    """The weighing of the stated facts, as the country's courts weigh them (unanswered inputs weigh nothing)."""

    employment: int = Field(ge=0, description="The weight of the stated facts that point to employment.")
    self_employment: int = Field(ge=0, description="The weight of the stated facts that point to self-employment.")
    stated_facts: int = Field(ge=0, description="How many of the test's questions are answered.")
    floor: int = Field(ge=1, description="Below this many answered questions, only a statutory rule gives a verdict.")


COULD_CHANGE_DESCRIPTION = (
    "Every unanswered question one of whose answers would change this verdict, with where each answer leads; empty "
    "when no single answer would."
)
ANSWER_SETS_DESCRIPTION = (
    "For a `risky` verdict that no single answer changes: the smallest sets of at most three answers that would, one "
    "for each verdict they lead to."
)
ANSWER_SET_SEARCH_DESCRIPTION = (
    "`not_needed` (a single answer can change the verdict, or it is decisive), `found` (see `next_answer_sets`), "
    "`none_would` (no set of at most three answers changes it) or `stopped` (the bounded search ended first)."
)
AnswerSetSearch = Literal["not_needed", "found", "none_would", "stopped"]


DECIDED_BY_DESCRIPTION = (
    "Why the verdict is decisive: the decisive rules that hold (each with its reason and legal source), or "
    "`weighing`. Empty when the verdict is `risky`."
)
DECIDING_FACTS_DESCRIPTION = "The inputs whose answers decided the verdict (empty when it is `risky`)."
NEXT_QUESTIONS_DESCRIPTION = (
    "For a `risky` verdict: at most five unanswered questions one of whose answers changes the verdict, the one that "
    'can move it most first (a question answered "don\'t know" after the others), each with where its answers '
    "lead. Empty when the verdict is decisive, and when no single answer changes it (see `next_answer_sets`)."
)


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
    source_url: str | None


class ZWVerdict(ResponseSchema):
    id: uuid.UUID = Field(description="The audit record: `GET /v1/classifications/{id}`.")
    verdict: Verdict
    score: int = Field(ge=0, le=100, description="Sum of the weights of the criteria hit (0–100).")
    ratio: float = Field(ge=0, le=1, description="`score / 100`.")
    criteria_hit: list[DutchCriterionId]
    advice: str
    presumption_of_employment: bool = Field(
        description="The rate presumption applies: its act is in force on `as_of` and the rate is at or below its "
        "tariefgrens (the verdict is then never safe); false while no date of entry into force is published."
    )
    tariefgrens: DutchTariefgrensOut | None = Field(description="The threshold in force on `as_of`, if any.")
    as_of: dt.date
    ruleset: RulesetRef
    criteria: list[DutchCriterionOut]
    unanswered: list[EngagementField] = Field(
        description="The inputs not answered: never weighed; `could_change` lists those whose answer could change "
        "the verdict."
    )
    decided_by: list[DecidingRule] = Field(default_factory=list, description=DECIDED_BY_DESCRIPTION)
    deciding_facts: list[EngagementField] = Field(default_factory=list, description=DECIDING_FACTS_DESCRIPTION)
    next_questions: list[NextQuestion] = Field(default_factory=list, description=NEXT_QUESTIONS_DESCRIPTION)
    could_change: list[NextQuestion] = Field(default_factory=list, description=COULD_CHANGE_DESCRIPTION)
    next_answer_sets: list[AnswerSetOut] = Field(default_factory=list, description=ANSWER_SETS_DESCRIPTION)
    answer_set_search: AnswerSetSearch = Field(default="not_needed", description=ANSWER_SET_SEARCH_DESCRIPTION)
    weighing: WeighingOut | None = Field(default=None, description="The weighing of the stated facts.")
    reference: str | None = Field(description="The `reference` sent with the request, if any.")
    metadata: dict[str, str] = Field(description="The `metadata` sent with the request (empty when none).")
    monitor: bool = Field(description="Whether the verdict is re-scored when the law changes.")
    created_at: dt.datetime
    livemode: Livemode


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
        description="The criteria not provided: never weighed; `could_change` lists those whose answer could change "
        "the verdict."
    )
    rules_applied: list[AppliedRule]
    decided_by: list[DecidingRule] = Field(default_factory=list, description=DECIDED_BY_DESCRIPTION)
    deciding_facts: list[CrossBorderCriterionName] = Field(default_factory=list, description=DECIDING_FACTS_DESCRIPTION)
    next_questions: list[NextQuestion] = Field(default_factory=list, description=NEXT_QUESTIONS_DESCRIPTION)
    could_change: list[NextQuestion] = Field(default_factory=list, description=COULD_CHANGE_DESCRIPTION)
    next_answer_sets: list[AnswerSetOut] = Field(default_factory=list, description=ANSWER_SETS_DESCRIPTION)
    answer_set_search: AnswerSetSearch = Field(default="not_needed", description=ANSWER_SET_SEARCH_DESCRIPTION)
    weighing: WeighingOut | None = Field(default=None, description="The weighing of the stated facts.")
    tariefgrens: CrossBorderTariefgrensOut | None
    as_of: dt.date
    ruleset: RulesetRef
    criteria: list[CrossBorderCriterionOut]
    reference: str | None = Field(description="The `reference` sent with the request, if any.")
    metadata: dict[str, str] = Field(description="The `metadata` sent with the request (empty when none).")
    monitor: bool = Field(description="Whether the verdict is re-scored when the law changes.")
    created_at: dt.datetime
    livemode: Livemode


DRY_RUN_ID_DESCRIPTION = "Always null: a dry run keeps no audit record, so there is nothing to fetch by id."


class ZWDryRunVerdict(ZWVerdict):
    """The answer of `POST /v1/classify/zelfstandigenwet?dry_run=true`: the verdict the same request would get, with
    no audit record, event or dossier behind it (`id` null)."""

    # A dry run's answer differs from a kept verdict's in this one field: a shape of its own, so that a client
    # generated from the contract keeps `ZWVerdict.id` a UUID.
    id: None = Field(description=DRY_RUN_ID_DESCRIPTION)  # type: ignore[assignment]


class CrossBorderDryRunVerdict(CrossBorderVerdict):
    """The answer of `POST /v1/classify/cross-border?dry_run=true`: the verdict the same request would get, with no
    audit record, event or dossier behind it (`id` null)."""

    id: None = Field(description=DRY_RUN_ID_DESCRIPTION)  # type: ignore[assignment]


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
    livemode: Livemode


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


class FactOut(ResponseSchema):
    """One condition of a decisive rule: `is` for a yes/no input, `at_least` or `at_most` for a number."""

    model_config = ConfigDict(
        from_attributes=True, validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    field: str
    is_: bool | None = Field(default=None, alias="is")
    at_least: float | None = None
    at_most: float | None = None


class DecisiveRuleOut(ResponseSchema):
    """Facts the law treats as enough for a verdict: the rule holds when all of `all_of` are true, at least one of
    `any_of` (if any), at least `at_least` of `of` (if given), and none of `unless`. A fact left unanswered never makes
    a rule hold; an unanswered `unless` fact does not stop it."""

    id: str
    verdict: Verdict
    reason: str
    all_of: list[FactOut]
    any_of: list[FactOut]
    at_least: int | None
    of: list[FactOut]
    unless: list[FactOut]
    statutory: bool = Field(
        default=False,
        description="A statute makes these facts enough, so the rule decides even with fewer than four questions "
        "answered (rules drawn from case law need four).",
    )
    legal_basis: LegalBasis


class QuestionOut(ResponseSchema):
    field: str = Field(description="The request field that answers it.")
    kind: Literal["boolean", "integer", "number"]
    question: str
    explanation: str = Field(description="Why it matters, in plain language.")
    legal_basis: LegalBasis
    true_when: Literal["yes", "no"] = Field(
        title="The answer for a true input",
        description="A boolean question's answer that sets `field` to true (the other sets it to false): `no` where "
        'the question asks the positive of a negatively named field (`not_registered_as_independent`: "Is the '
        'freelancer registered…?").',
    )


class QuestionCatalogue(ResponseSchema):
    """A test's questions, in the order of its ruleset, and the decisive rules that read their answers."""

    test: Literal["NL", "FR", "DE", "BE"]
    ruleset: RulesetRef
    questions: list[QuestionOut]
    decisive: list[DecisiveRuleOut]
    livemode: Livemode


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
    rules: list[CatalogueRule] = Field(description="The weighing rules, applied when no decisive rule holds.")
    decisive: list[DecisiveRuleOut] = Field(description="The facts that are enough for `unsafe` or `safe`, first.")
    tariefgrens: list[CrossBorderTariefgrensOut]
    livemode: Livemode


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
    livemode: Livemode


BATCH_ITEMS_DESCRIPTION = (
    f"1 to {MAX_BATCH_ITEMS} requests, each the body of the single operation. Each is checked on its own: an invalid "
    "item is answered by its own problem in `data`, not by a 400 for the batch."
)


def _items_field(contract: dict[str, Any]) -> Any:
    """A batch's `items` (1 to 1000), described in the contract by `contract` besides the bounds."""
    return Field(
        min_length=1, max_length=MAX_BATCH_ITEMS, description=BATCH_ITEMS_DESCRIPTION, json_schema_extra=contract
    )


def _items_of(model: type[BaseModel]) -> dict[str, Any]:
    """The contract's `items`: the single operation's request schema, by reference. The server still takes any JSON
    value as an item and validates each on its own, answering an invalid one with its own problem."""
    return {"items": {"$ref": f"#/components/schemas/{model.__name__}"}, VALIDATED_PER_ITEM: True}


class BatchRequest(FewUnknownFields):
    """A batch of classification requests, the items untyped. The batch operations take
    `ZelfstandigenwetBatchRequest` and `CrossBorderBatchRequest`, the same JSON with typed items; this one stays for
    code generated from earlier versions of the contract."""

    # Not a RequestSchema: each item is validated by `batch.classify_batch`, its NUL check included, so one bad item
    # is answered on its own.
    model_config = ConfigDict(extra="forbid", strict=True)

    items: list[Any] = _items_field({VALIDATED_PER_ITEM: True})


class ZelfstandigenwetBatchRequest(BatchRequest):
    """Up to 1000 requests of `POST /v1/classify/zelfstandigenwet`."""

    items: list[Any] = _items_field(_items_of(ZelfstandigenwetRequest))


class CrossBorderBatchRequest(BatchRequest):
    """Up to 1000 requests of `POST /v1/classify/cross-border`; their countries may differ."""

    items: list[Any] = _items_field(_items_of(CrossBorderRequest))


class ItemProblem(ResponseSchema):
    """The problem of one batch item (RFC 9457 fields plus its index); the other items are classified anyway."""

    index: int = Field(description="The item's position in `items`, from 0.")
    type: str
    title: str
    status: int
    detail: str
    code: str
    errors: list[dict[str, str]] = Field(
        default_factory=list,
        description="Each offending field, as `items.N.…`: the first 20 at most, and fewer when they would not fit "
        "in 1 kB.",
    )
    error_count: int | None = Field(
        default=None, description="How many fields were at fault, when more than `errors` lists.", ge=0
    )


class ZelfstandigenwetBatchResult(ResponseSchema):
    data: list[ZWVerdict | ItemProblem] = Field(description="One entry per item, in the order sent.")


class CrossBorderBatchResult(ResponseSchema):
    data: list[CrossBorderVerdict | ItemProblem] = Field(description="One entry per item, in the order sent.")


class ZelfstandigenwetBatchDryRun(ResponseSchema):
    """The answer of a Dutch batch with `dry_run=true`: each item's verdict, none of them kept."""

    data: list[ZWDryRunVerdict | ItemProblem] = Field(description="One entry per item, in the order sent.")


class CrossBorderBatchDryRun(ResponseSchema):
    """The answer of a cross-border batch with `dry_run=true`: each item's verdict, none of them kept."""

    data: list[CrossBorderDryRunVerdict | ItemProblem] = Field(description="One entry per item, in the order sent.")
