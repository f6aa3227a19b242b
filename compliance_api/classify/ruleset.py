"""Ruleset files: their schema, and the loader that validates every file before the service starts.

A ruleset is data (criteria, weights, thresholds, legal sources); the scoring code in `dutch.py` and `crossborder.py`
only interprets it. A broken file raises `RulesetError` naming the file and the field, which stops the start.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal, TypeVar, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, HttpUrl, ValidationError, model_validator

from compliance_api.classify.language import CODES, Language
from compliance_api.classify.verdict import Country, Verdict

RULESET_PACKAGE = "compliance_api.classify"
DUTCH_FILE = "nl-zw.json"
PHRASES_FILE = "phrases.json"
CROSS_BORDER_FILES = {
    Country.FR: "fr-subordination.json",
    Country.DE: "de-scheinselbstaendigkeit.json",
    Country.BE: "be-arbeidsrelatiewet.json",
}
ENGAGEMENT_FIELDS = (
    "hourly_rate_eur",
    "months_duration",
    "days_per_week",
    "other_clients_count",
    "own_tools",
    "own_liability",
    "sets_own_hours",
    "can_delegate",
    "profit_risk",
    "works_under_instructions",
    "client_supervises_work",
    "embedded_in_organisation",
    "structural_work",
    "same_work_as_employees",
    "terms_set_by_client",
    "acts_as_entrepreneur",
)
"""The Dutch engagement's inputs: the nine of the original contract, then the circumstances Deliveroo weighs that
those nine cannot express (added in ruleset version 2026-11-26)."""

Identifier = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{1,62}$")]
Text = Annotated[str, Field(min_length=1, max_length=2000)]
Note = Annotated[str, Field(min_length=1, max_length=6000)]
LegalStatus = Literal["consultation_draft", "draft_bill", "bill", "adopted_not_in_force", "in_force"]


def _one_per_language(value: object) -> object:
    """`{"en": ..., "nl": ..., "fr": ..., "de": ...}` as a tuple indexed by `Language`; a missing language is named."""
    if not isinstance(value, dict):
        raise ValueError(f"one text per language ({', '.join(CODES)})")  # pydantic wants ValueError
    missing = [code for code in CODES if code not in value]
    if missing:
        raise ValueError(f"missing translation: {', '.join(missing)}")
    unknown = sorted(set(value) - set(CODES))
    if unknown:
        raise ValueError(f"unknown language: {', '.join(unknown)} (allowed: {', '.join(CODES)})")
    return tuple(value[code] for code in CODES)


Translated = Annotated[tuple[Text, Text, Text, Text], BeforeValidator(_one_per_language)]
"""A text in every language of `Language`, read as `text[language]` (an index, so no lookup per request)."""
TranslatedNote = Annotated[tuple[Note, Note, Note, Note], BeforeValidator(_one_per_language)]
OfficialUrl = Annotated[
    HttpUrl | None,
    Field(
        description="The official text cited, on its official publisher (a statute's article, a judgment's ECLI or "
        "number, a bill's parliamentary paper); none where that text is not published online, and the citation "
        "names it instead."
    ),
]
Answer = Literal["yes", "no"]


def link(url: HttpUrl | None) -> str | None:
    """An official URL as the answers write it: a string, or None where the citation alone names the text."""
    return None if url is None else str(url)


def _check_placeholders(field: str, texts: tuple[str, ...], **values: object) -> None:
    """Each translation of a template must fill with exactly these names (a typo would fail a request instead)."""
    for language, text in zip(Language, texts, strict=True):
        try:
            text.format(**values)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"{field}.{language.code}: placeholders must be {', '.join(values)} ({exc})") from exc
        absent = [name for name in values if "{" + name + "}" not in text]
        if absent:
            raise ValueError(f"{field}.{language.code}: placeholder {{{absent[0]}}} is missing")


class RulesetError(Exception):
    """A ruleset file is missing or invalid; the message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(_Strict):
    title: Text = Field(
        description="The citation, as the text's own country writes it (an official title may stay "
        "in its own language)."
    )
    url: OfficialUrl = None


class RulesetHeader(_Strict):
    id: Annotated[str, Field(pattern=r"^[a-z]{2}-[a-z0-9-]+$")]
    version: dt.date
    valid_from: dt.date
    law: Text
    source_note: TranslatedNote
    sources: Annotated[tuple[Source, ...], Field(min_length=1)]


class HitWhenFalse(_Strict):
    op: Literal["is_false"]


class HitWhenTrue(_Strict):
    op: Literal["is_true"]


class HitWhenEquals(_Strict):
    op: Literal["equals"]
    value: Annotated[int, Field(ge=0)]


class HitWhenAtLeast(_Strict):
    op: Literal["at_least"]
    value: Annotated[int, Field(ge=0)]


class HitWhenAtMostTariefgrens(_Strict):
    op: Literal["at_most_tariefgrens"]


HitWhen = Annotated[
    HitWhenFalse | HitWhenTrue | HitWhenEquals | HitWhenAtLeast | HitWhenAtMostTariefgrens, Field(discriminator="op")
]


InputKind = Literal["boolean", "integer", "number"]


class Fact(_Strict):
    """One condition on one input, as a decisive rule states it: `is` for a yes/no input, `at_least` or `at_most` for
    a number."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    input: Identifier
    is_: bool | None = Field(default=None, alias="is")
    at_least: Annotated[Decimal, Field(ge=0)] | None = None
    at_most: Annotated[Decimal, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _one_test(self) -> Fact:
        if [self.is_, self.at_least, self.at_most].count(None) != 2:
            raise ValueError("a fact has exactly one of is, at_least, at_most")
        return self


class DecisiveRule(_Strict):
    """Facts the law treats as enough for a verdict: it holds when all of `all_of` are true, at least one of `any_of`
    (if any) is true, at least `at_least` of `of` (if given) are true, and none of `unless` is true; an unknown
    `unless` fact does not stop it."""

    id: Identifier
    verdict: Verdict
    all_of: tuple[Fact, ...] = ()
    any_of: tuple[Fact, ...] = ()
    at_least: Annotated[int, Field(ge=1)] | None = None
    of: tuple[Fact, ...] = ()
    unless: tuple[Fact, ...] = ()
    rebutted_by: tuple[Identifier, ...] = Field(
        default=(),
        description="The safe rules that rebut this one (a presumption): while one of them holds, it does not decide.",
    )
    statutory: bool = Field(
        default=False,
        description="A statute (not case law) makes these facts enough: the rule decides below the weighing's floor.",
    )
    reason: Translated
    basis: Text
    source_url: OfficialUrl = None

    @model_validator(mode="after")
    def _decides(self) -> DecisiveRule:
        if self.verdict is Verdict.risky:
            raise ValueError("a decisive rule decides: safe or unsafe")
        if not (self.all_of or self.any_of or self.of):
            raise ValueError("a decisive rule needs facts in all_of, any_of or of")
        if (self.at_least is None) != (not self.of) or (self.at_least and self.at_least > len(self.of)):
            raise ValueError("at_least and of go together, and at_least cannot exceed the length of of")
        return self

    @property
    def facts(self) -> tuple[Fact, ...]:
        return (*self.all_of, *self.any_of, *self.of, *self.unless)


def _inputs_known(rules: Sequence[DecisiveRule], inputs: Sequence[str], field: str) -> None:
    safe = {rule.id for rule in rules if rule.verdict is Verdict.safe}
    if len({rule.id for rule in rules}) != len(rules):
        raise ValueError(f"{field}: ids must be unique")
    for index, rule in enumerate(rules):
        if set(rule.rebutted_by) - safe:
            raise ValueError(f"{field}.{index}: rebutted_by names safe rules of this ruleset")
        unknown = sorted({fact.input for fact in rule.facts} - set(inputs))
        if unknown:
            raise ValueError(f"{field}.{index}: unknown inputs {', '.join(unknown)}")


class Indicator(_Strict):
    """What one input weighs in the weighing of the stated facts: `employment` when its answer points to employment
    (the Dutch criterion hit, a cross-border criterion met), `self_employment` when it is answered the other way. Zero
    where the law gives that answer no weight (the absence of a platform criterion says nothing of self-employment)."""

    input: Identifier
    employment: Annotated[int, Field(ge=0, le=100)]
    self_employment: Annotated[int, Field(ge=0, le=100)]


class WeighingTexts(_Strict):
    """The weighing's sentences, each a template in every language."""

    reason: Translated
    too_few: Translated

    @model_validator(mode="after")
    def _templates(self) -> WeighingTexts:
        _check_placeholders("reason", self.reason, employment="", self_employment="", stated="")
        _check_placeholders("too_few", self.too_few, stated="", floor="")
        return self


class Weighing(_Strict):
    """How the stated facts are weighed, as the country's courts weigh them (docs/integrate/classify.md).

    Below `floor` stated facts (answered inputs), no verdict is decisive unless a statutory decisive rule holds.
    From the floor up, the verdict is decisive when the stated facts weigh at least `clear_ratio` times as much one
    way as the other, or when one side's lead exceeds `balanced_within_percent` of their total plus
    `unanswered_share_percent` of what the unanswered inputs could weigh against it (with every input answered: any
    lead beyond a true balance). Unanswered inputs are never weighed as facts: they only ask for a larger lead."""

    floor: Annotated[int, Field(ge=1, le=20)]
    clear_ratio: Annotated[Decimal, Field(gt=1, le=10)]
    balanced_within_percent: Annotated[int, Field(ge=0, le=50)]
    unanswered_share_percent: Annotated[int, Field(ge=0, le=100)]
    basis: Text
    source_url: OfficialUrl = None
    indicators: Annotated[tuple[Indicator, ...], Field(min_length=1)]
    presumption_pending: Translated | None = Field(
        default=None,
        description="Said when the rate is at or below a threshold whose act is not in force on the day judged.",
    )
    texts: WeighingTexts

    @model_validator(mode="after")
    def _pending(self) -> Weighing:
        if self.presumption_pending is not None:
            _check_placeholders("presumption_pending", self.presumption_pending, amount="")
        return self

    def check_inputs(self, inputs: Sequence[str]) -> None:
        if [indicator.input for indicator in self.indicators] != list(inputs):
            raise ValueError("weighing.indicators: one per input, in the order of the inputs")


class DutchQuestion(_Strict):
    """How the questionnaire and the next questions ask for one input, and why it matters."""

    input: Literal[ENGAGEMENT_FIELDS]  # type: ignore[valid-type]
    kind: InputKind
    text: Translated
    explanation: Translated
    basis: Text
    source_url: OfficialUrl = None
    true_when: Answer = Field(default="yes", description="The answer that sets the input to true.")


class DutchCriterion(_Strict):
    id: Identifier
    group: Literal["self_employment", "work_relationship"]
    input: Literal[ENGAGEMENT_FIELDS]  # type: ignore[valid-type]  # the engagement's field names, listed above
    hit_when: HitWhen
    weight: Annotated[int, Field(ge=0, le=100)]
    presumption: bool = False
    basis: Text
    source_url: OfficialUrl = None
    advice: Translated


class DutchTariefgrens(_Strict):
    amount_eur: Annotated[Decimal, Field(gt=0, max_digits=7, decimal_places=2)]
    valid_from: dt.date
    legal_status: LegalStatus
    basis: Translated = Field(description="Quoted in the advice, so written in every language.")
    source_url: OfficialUrl = None
    in_force_from: dt.date | None = Field(
        default=None,
        description="The day the act making this amount a presumption of employment enters into force; none while no "
        "date is published (the presumption then never applies).",
    )

    def presumption_on(self, day: dt.date) -> bool:
        """Whether the rate presumption is law on `day`."""
        return self.in_force_from is not None and day >= self.in_force_from


class DutchTexts(_Strict):
    """The Dutch advice's fixed sentences, each a template in every language."""

    not_assessed: Translated
    unanswered: Translated
    unanswered_range: Translated
    no_threshold: Translated
    threshold_used: Translated
    legal_status: dict[LegalStatus, Translated]

    @model_validator(mode="after")
    def _templates(self) -> DutchTexts:
        _check_placeholders("unanswered", self.unanswered, questions="")
        _check_placeholders("unanswered_range", self.unanswered_range, best="", worst="")
        _check_placeholders("no_threshold", self.no_threshold, as_of="")
        _check_placeholders("threshold_used", self.threshold_used, amount="", valid_from="", status="", basis="")
        if set(self.legal_status) != set(get_args(LegalStatus)):
            raise ValueError("legal_status: one label per legal status")
        return self


class DutchScoring(_Strict):
    unsafe_at_score: Annotated[int, Field(ge=0, le=100)]
    unsafe_at_score_with_presumption: Annotated[int, Field(ge=0, le=100)]
    presumption_floor: Verdict


def _dated(entries: Sequence[DutchTariefgrens] | Sequence[CrossBorderTariefgrens], field: str) -> None:
    dates = [entry.valid_from for entry in entries]
    if dates != sorted(set(dates)):
        raise ValueError(f"{field}: valid_from dates must be unique and in ascending order")


class DutchRuleset(RulesetHeader):
    country: Literal["NL"]
    tariefgrens: Annotated[tuple[DutchTariefgrens, ...], Field(min_length=1)]
    criteria: Annotated[tuple[DutchCriterion, ...], Field(min_length=1)]
    questions: Annotated[tuple[DutchQuestion, ...], Field(min_length=1)]
    decisive: tuple[DecisiveRule, ...]
    scoring: DutchScoring
    weighing: Weighing
    texts: DutchTexts

    @model_validator(mode="after")
    def _consistent(self) -> DutchRuleset:
        _dated(self.tariefgrens, "tariefgrens")
        ids = [criterion.id for criterion in self.criteria]
        if len(set(ids)) != len(ids):
            raise ValueError("criteria: ids must be unique")
        if sorted(criterion.input for criterion in self.criteria) != sorted(ENGAGEMENT_FIELDS):
            raise ValueError("criteria: each engagement field must be read by exactly one criterion")
        if [question.input for question in self.questions] != list(ENGAGEMENT_FIELDS):
            raise ValueError("questions: one per engagement field, in the order of the fields")
        _inputs_known(self.decisive, ENGAGEMENT_FIELDS, "decisive")
        self.weighing.check_inputs(ENGAGEMENT_FIELDS)
        if sum(criterion.weight for criterion in self.criteria) != 100:
            raise ValueError("criteria: weights must add up to 100")
        if [c.presumption for c in self.criteria].count(True) != 1:
            raise ValueError("criteria: exactly one criterion must carry the presumption")
        for criterion in self.criteria:
            reads_rate = criterion.input == "hourly_rate_eur"
            if (criterion.hit_when.op == "at_most_tariefgrens") != reads_rate or criterion.presumption != reads_rate:
                raise ValueError(f"criteria.{criterion.id}: only the hourly rate is compared with the tariefgrens")
        return self

    def tariefgrens_on(self, day: dt.date) -> DutchTariefgrens | None:
        """The threshold entry in force on `day` (the newest with valid_from <= day), if any."""
        return _entry_on(self.tariefgrens, day)


class CrossBorderCriterion(_Strict):
    name: Identifier
    group: Identifier
    weight: Annotated[int, Field(ge=0, le=100)]
    description: Translated
    question: Translated = Field(description="The criterion asked as a question a person can answer yes or no.")
    true_when: Answer = Field(
        default="yes", description="The answer that meets the criterion: `no` where the question asks the positive."
    )
    basis: Text
    source_url: OfficialUrl = None
    advice: Translated


class CrossBorderRule(_Strict):
    """A rule fires when all of its conditions hold; the verdict is the worst of the rules that fire."""

    verdict: Verdict
    reason: Translated
    all_of: tuple[Identifier, ...] = ()
    at_least: Annotated[int, Field(ge=1)] | None = None
    of: tuple[Identifier, ...] = ()
    share_at_least_percent: Annotated[int, Field(ge=1, le=100)] | None = None

    @model_validator(mode="after")
    def _has_condition(self) -> CrossBorderRule:
        if not (self.all_of or self.at_least or self.share_at_least_percent):
            raise ValueError("a rule needs all_of, at_least/of or share_at_least_percent")
        if (self.at_least is None) != (not self.of) or (self.at_least and self.at_least > len(self.of)):
            raise ValueError("at_least and of go together, and at_least cannot exceed the length of of")
        return self


class CrossBorderTariefgrens(_Strict):
    value: Annotated[int, Field(gt=0)]
    multiplier: Annotated[Decimal, Field(gt=0)]
    min_wage_hourly: Annotated[Decimal, Field(gt=0)]
    min_wage_valid_from: dt.date
    valid_from: dt.date
    basis: Translated
    source_url: OfficialUrl = None


class CrossBorderTexts(_Strict):
    """The cross-border advice's fixed sentences, each a template in every language."""

    rule_applied: Translated
    unanswered: Translated
    unanswered_range: Translated

    @model_validator(mode="after")
    def _templates(self) -> CrossBorderTexts:
        _check_placeholders("rule_applied", self.rule_applied, reason="")
        _check_placeholders("unanswered", self.unanswered, questions="")
        _check_placeholders("unanswered_range", self.unanswered_range, best="", worst="")
        return self


class CrossBorderRuleset(RulesetHeader):
    country: Country
    criteria: Annotated[tuple[CrossBorderCriterion, ...], Field(min_length=1)]
    rules: Annotated[tuple[CrossBorderRule, ...], Field(min_length=1)]
    decisive: tuple[DecisiveRule, ...]
    tariefgrens: Annotated[tuple[CrossBorderTariefgrens, ...], Field(min_length=1)]
    advice: dict[Verdict, Translated]
    weighing: Weighing
    texts: CrossBorderTexts

    @model_validator(mode="after")
    def _consistent(self) -> CrossBorderRuleset:
        _dated(self.tariefgrens, "tariefgrens")
        names = [criterion.name for criterion in self.criteria]
        if len(set(names)) != len(names):
            raise ValueError("criteria: names must be unique")
        if sum(criterion.weight for criterion in self.criteria) <= 0:
            raise ValueError("criteria: the weights must not all be zero")
        for index, rule in enumerate(self.rules):
            unknown = sorted(set(rule.all_of + rule.of) - set(names))
            if unknown:
                raise ValueError(f"rules.{index}: unknown criteria {', '.join(unknown)}")
        _inputs_known(self.decisive, names, "decisive")
        self.weighing.check_inputs(names)
        for index, decisive in enumerate(self.decisive):
            if any(fact.is_ is None for fact in decisive.facts):
                raise ValueError(f"decisive.{index}: a criterion is met or not: use `is`")
        if set(self.advice) != set(Verdict):
            raise ValueError("advice: one text per verdict (safe, risky, unsafe)")
        return self

    @property
    def criterion_names(self) -> tuple[str, ...]:
        return tuple(criterion.name for criterion in self.criteria)

    def tariefgrens_on(self, day: dt.date) -> CrossBorderTariefgrens | None:
        return _entry_on(self.tariefgrens, day)


DatedEntry = TypeVar("DatedEntry", "DutchTariefgrens", "CrossBorderTariefgrens")
ModelT = TypeVar("ModelT", bound=BaseModel)


def _entry_on(entries: Sequence[DatedEntry], day: dt.date) -> DatedEntry | None:
    current = None
    for entry in entries:
        if entry.valid_from <= day:
            current = entry
    return current


class Phrases(_Strict):
    """The words every test's next questions and decisions are written with, in every language."""

    yes: Translated
    no: Translated
    at_least: Translated
    at_most: Translated
    between: Translated
    exactly: Translated
    leads_to: Translated
    stays: Translated
    weighing_unsafe: Translated
    weighing_safe: Translated

    @model_validator(mode="after")
    def _templates(self) -> Phrases:
        _check_placeholders("at_least", self.at_least, low="")
        _check_placeholders("at_most", self.at_most, high="")
        _check_placeholders("between", self.between, low="", high="")
        _check_placeholders("exactly", self.exactly, low="")
        _check_placeholders("leads_to", self.leads_to, answer="", verdict="")
        _check_placeholders("stays", self.stays, answer="", verdict="")
        _check_placeholders("weighing_unsafe", self.weighing_unsafe, score="", threshold="")
        return self


class Rulesets(BaseModel):
    """Every ruleset the service scores with, loaded once."""

    model_config = ConfigDict(frozen=True)

    dutch: DutchRuleset
    cross_border: dict[Country, CrossBorderRuleset]
    phrases: Phrases


def _read(model: type[ModelT], path: Path) -> ModelT:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RulesetError(f"ruleset {path.name}: cannot be read ({exc.strerror})") from exc
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(file)"
        raise RulesetError(f"ruleset {path.name}: {field}: {first['msg']}") from exc


def load_rulesets(directory: Path | None = None) -> Rulesets:
    """Read and validate every ruleset file (the packaged ones unless `directory` is given)."""
    folder = directory or Path(str(resources.files(RULESET_PACKAGE) / "rulesets"))
    dutch = _read(DutchRuleset, folder / DUTCH_FILE)
    cross_border = {country: _read(CrossBorderRuleset, folder / name) for country, name in CROSS_BORDER_FILES.items()}
    for country, ruleset in cross_border.items():
        if ruleset.country is not country:
            raise RulesetError(f"ruleset {CROSS_BORDER_FILES[country]}: country: must be {country}")
    return Rulesets(dutch=dutch, cross_border=cross_border, phrases=_read(Phrases, folder / PHRASES_FILE))


@cache
def packaged_rulesets() -> Rulesets:
    """The rulesets shipped in the package, validated once per process."""
    return load_rulesets()
