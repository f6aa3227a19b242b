"""Turn assessments and rulesets into response bodies."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, TypeVar, cast

from compliance_api.classify.crossborder import CrossBorderAssessment
from compliance_api.classify.decide import Answer, AnswerSet, RankedQuestion
from compliance_api.classify.dutch import DutchAssessment, DutchCriterionResult
from compliance_api.classify.language import Language, decimal
from compliance_api.classify.listing import Listed
from compliance_api.classify.models import RecordWithHistory
from compliance_api.classify.questions import Questionnaire
from compliance_api.classify.ruleset import (
    CrossBorderCriterion,
    CrossBorderRuleset,
    CrossBorderTariefgrens,
    DecisiveRule,
    DutchRuleset,
    DutchTariefgrens,
    Fact,
    Phrases,
    RulesetHeader,
    Weighing,
    link,
)
from compliance_api.classify.schemas import (
    CatalogueCriterion,
    CatalogueRule,
    ClassificationRecord,
    ClassificationSummary,
    CriteriaCatalogue,
    DecisiveRuleOut,
    FactOut,
    LegalBasis,
    QuestionCatalogue,
    QuestionOut,
    RulesetRef,
    Tracked,
)
from compliance_api.classify.verdict import Verdict, word
from compliance_api.classify.verdict_body import (
    AnswerBody,
    AnswerSetBody,
    AnswerSetSearch,
    CrossBorderCriterionBody,
    CrossBorderTariefgrensOut,
    CrossBorderVerdictBody,
    DecidingRuleBody,
    DutchCriterionBody,
    DutchThresholdBody,
    LegalBasisBody,
    NextQuestionBody,
    RuleAppliedBody,
    RulesetBody,
    SetAnswerBody,
    WeighingBody,
    ZWVerdictBody,
)
from compliance_api.kit.environment import Environment

SourceT = TypeVar("SourceT")
FragmentT = TypeVar("FragmentT")


def ruleset_ref(ruleset: RulesetHeader) -> RulesetRef:
    return RulesetRef(id=ruleset.id, version=ruleset.version, valid_from=ruleset.valid_from)


def _timestamp(moment: dt.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


# The verdict bodies are frozen dataclasses (`verdict_body`) written by orjson, built from parts computed once per
# ruleset: constructing the response models per request cost a third of the endpoint's CPU. Tests hold these bodies
# against ZWVerdict and CrossBorderVerdict, and schemathesis checks them against the contract.


FRAGMENTS_KEPT = 131_072
_FRAGMENTS: dict[tuple[Callable[[Any], Any], int], tuple[object, Any]] = {}


def _fragment(build: Callable[[SourceT], FragmentT], source: SourceT) -> FragmentT:
    """`build(source)`, computed once per source object: a ruleset's part, or the criteria results the compiled tests
    remember per answers. Keyed by identity, because hashing the rulesets' frozen models costs as much as building
    the fragment; the entry holds the source, so its id cannot be reused. Emptied past `FRAGMENTS_KEPT` entries."""
    entry = _FRAGMENTS.get((build, id(source)))
    if entry is None or entry[0] is not source:
        if len(_FRAGMENTS) >= FRAGMENTS_KEPT:
            _FRAGMENTS.clear()
        entry = (source, build(source))
        _FRAGMENTS[(build, id(source))] = entry
    return cast(FragmentT, entry[1])


def _ruleset_body(ruleset: RulesetHeader) -> RulesetBody:
    return RulesetBody(ruleset.id, ruleset.version, ruleset.valid_from)


def _dutch_criteria(results: tuple[DutchCriterionResult, ...]) -> tuple[DutchCriterionBody, ...]:
    """The criteria of a verdict (the compiled test remembers its results per answers, so this is built once)."""
    return tuple(
        DutchCriterionBody(
            id=result.criterion.id,
            group=result.criterion.group,
            input=result.criterion.input,
            weight=result.criterion.weight,
            legal_basis=LegalBasisBody(result.criterion.basis, link(result.criterion.source_url)),
            answered=result.answered,
            hit=result.hit,
        )
        for result in results
    )


def _dutch_threshold(entry: DutchTariefgrens) -> tuple[DutchThresholdBody, ...]:
    """The threshold in each language, indexed by `Language` (its basis is translated)."""
    return tuple(
        DutchThresholdBody(
            amount_eur=float(entry.amount_eur),
            valid_from=entry.valid_from,
            legal_status=entry.legal_status,
            basis=entry.basis[language],
            source_url=link(entry.source_url),
        )
        for language in Language
    )


def _rule_body(rule: DecisiveRule, language: Language) -> DecidingRuleBody:
    return DecidingRuleBody(
        rule.id, rule.verdict, rule.reason[language], LegalBasisBody(rule.basis, link(rule.source_url))
    )


def _number(value: Decimal, money: bool, language: Language) -> str:
    return decimal(value, language) if money else str(int(value))


def _answer_label(answer: Answer, kind: str, true_when: str, phrases: Phrases, language: Language) -> str:
    """How an answer is written: yes or no (the answer that sets the input to this value), or the range of numbers
    it stands for."""
    if kind == "boolean":
        return (phrases.yes if answer.value == (true_when == "yes") else phrases.no)[language]
    money = kind == "number"
    low = None if answer.low is None else _number(answer.low, money, language)
    high = None if answer.high is None else _number(answer.high, money, language)
    if high is None:
        return phrases.at_least[language].format(low=low)
    if low is None or (answer.low == 0 and not money and answer.high != 0):
        return phrases.at_most[language].format(high=high)
    if low == high:
        return phrases.exactly[language].format(low=low)
    return phrases.between[language].format(low=low, high=high)


def next_question(
    question: RankedQuestion,
    kind: str,
    text: str,
    basis: LegalBasisBody,
    current: Verdict,
    phrases: Phrases,
    language: Language,
    true_when: str = "yes",
) -> NextQuestionBody:
    """One question of `next_questions`: where each answer leads, in `language`."""
    answers = tuple(
        AnswerBody(_answer_label(answer, kind, true_when, phrases, language), answer.value, answer.verdict)
        for answer in question.answers
    )
    summary = "; ".join(
        (phrases.stays if shown.verdict is current else phrases.leads_to)[language].format(
            answer=shown.answer, verdict=word(shown.verdict, language)
        )
        for shown in answers
    )
    return NextQuestionBody(question.input, text, answers, summary, basis)


def _weighing_rule(
    assessment_verdict: Verdict,
    score: int,
    threshold: int,
    law: str,
    source_url: str | None,
    phrases: Phrases,
    language: Language,
) -> DecidingRuleBody:
    reason = (
        phrases.weighing_unsafe[language].format(score=score, threshold=threshold)
        if assessment_verdict is Verdict.unsafe
        else phrases.weighing_safe[language]
    )
    return DecidingRuleBody("weighing", assessment_verdict, reason, LegalBasisBody(law, source_url))


def _dutch_decided(
    assessment: DutchAssessment, ruleset: DutchRuleset, phrases: Phrases
) -> tuple[DecidingRuleBody, ...]:
    decided, language = assessment.decided, assessment.language
    if decided is None:
        return ()
    if decided.rules:
        return tuple(_rule_body(rule, language) for rule in decided.rules)
    threshold = (
        ruleset.scoring.unsafe_at_score_with_presumption
        if assessment.presumption_of_employment
        else ruleset.scoring.unsafe_at_score
    )
    if assessment.verdict is Verdict.unsafe and assessment.score >= threshold:
        source = link(ruleset.sources[0].url)
        return (
            _weighing_rule(assessment.verdict, assessment.score, threshold, ruleset.law, source, phrases, language),
        )
    return (_balance_rule(assessment.verdict, ruleset.weighing, assessment.balance, language),)


def _balance_rule(
    verdict: Verdict, weighing: Weighing, balance: tuple[int, int, int], language: Language
) -> DecidingRuleBody:
    """The weighing of the stated facts as the rule that decided."""
    employment, self_employment, stated = balance
    reason = weighing.texts.reason[language].format(
        employment=employment, self_employment=self_employment, stated=stated
    )
    return DecidingRuleBody("weighing", verdict, reason, LegalBasisBody(weighing.basis, link(weighing.source_url)))


def _answer_sets(
    sets: tuple[AnswerSet, ...], asked: Mapping[str, tuple[str, str]], phrases: Phrases, language: Language
) -> tuple[AnswerSetBody, ...]:
    """`next_answer_sets`; `asked` gives each input's kind and the answer that sets it to true."""
    return tuple(
        AnswerSetBody(
            tuple(
                SetAnswerBody(
                    answer.input,
                    _answer_label(
                        Answer(answer.value, answer.low, answer.high, found.verdict),
                        *asked[answer.input],
                        phrases,
                        language,
                    ),
                    answer.value,
                )
                for answer in found.answers
            ),
            found.verdict,
        )
        for found in sets
    )


def answer_set_search(
    verdict: Verdict, could_change: tuple[RankedQuestion, ...], sets: tuple[AnswerSet, ...], complete: bool
) -> AnswerSetSearch:
    """How the search for a set of answers ended (`AnswerSetSearch`)."""
    if verdict is not Verdict.risky or could_change:
        return "not_needed"
    if sets:
        return "found"
    return "none_would" if complete else "stopped"


def _closing(
    assessment: DutchAssessment | CrossBorderAssessment,
    weighing: Weighing,
    asked: Mapping[str, tuple[str, str]],
    phrases: Phrases,
    tracked: Tracked,
    created_at: dt.datetime,
    livemode: bool,
) -> dict[str, Any]:
    """The verdict's closing fields (`verdict_body._Closing`) that both tests write alike, by name."""
    employment, self_employment, stated = assessment.balance
    return {
        "next_answer_sets": _answer_sets(assessment.answer_sets, asked, phrases, assessment.language),
        "answer_set_search": answer_set_search(
            assessment.verdict, assessment.could_change, assessment.answer_sets, assessment.sets_complete
        ),
        "weighing": WeighingBody(employment, self_employment, stated, weighing.floor),
        "reference": tracked.reference,
        "metadata": tracked.metadata or {},
        "monitor": tracked.monitor,
        "created_at": _timestamp(created_at),
        "livemode": livemode,
    }


_QUESTIONS: dict[tuple[int, Language], tuple[object, tuple[NextQuestionBody, ...]]] = {}


def _in_language(
    source: tuple[RankedQuestion, ...], language: Language, build: Callable[[], tuple[NextQuestionBody, ...]]
) -> tuple[NextQuestionBody, ...]:
    """`build()`, once per next-questions tuple and language: the compiled tests remember their outcomes, so the same
    tuple comes back for the same facts (keyed by identity; the entry holds the tuple, so its id is not reused)."""
    if not source:
        return ()
    entry = _QUESTIONS.get((id(source), language))
    if entry is None or entry[0] is not source:
        if len(_QUESTIONS) >= FRAGMENTS_KEPT:
            _QUESTIONS.clear()
        entry = (source, build())
        _QUESTIONS[(id(source), language)] = entry
    return entry[1]


def _dutch_questions(
    assessment: DutchAssessment,
    ruleset: DutchRuleset,
    phrases: Phrases,
    found: tuple[RankedQuestion, ...] | None = None,
) -> tuple[NextQuestionBody, ...]:
    """`next_questions` (or, given `found`, those questions) written out in the verdict's language."""
    source = assessment.next_questions if found is None else found
    return _in_language(source, assessment.language, lambda: _dutch_questions_now(assessment, ruleset, phrases, source))


def _dutch_questions_now(
    assessment: DutchAssessment, ruleset: DutchRuleset, phrases: Phrases, source: tuple[RankedQuestion, ...]
) -> tuple[NextQuestionBody, ...]:
    questions = {question.input: question for question in ruleset.questions}
    language = assessment.language
    return tuple(
        next_question(
            found,
            questions[found.input].kind,
            questions[found.input].text[language],
            LegalBasisBody(questions[found.input].basis, link(questions[found.input].source_url)),
            assessment.verdict,
            phrases,
            language,
        )
        for found in source
    )


def dutch_verdict(
    assessment: DutchAssessment,
    ruleset: DutchRuleset,
    phrases: Phrases,
    *,
    id: uuid.UUID,
    created_at: dt.datetime,
    tracked: Tracked,
    livemode: bool,
) -> ZWVerdictBody:
    """The ZWVerdict body."""
    return ZWVerdictBody(
        id=id,
        verdict=assessment.verdict,
        score=assessment.score,
        ratio=assessment.ratio,
        criteria_hit=tuple(assessment.criteria_hit),
        advice=assessment.advice,
        presumption_of_employment=assessment.presumption_of_employment,
        tariefgrens=None
        if assessment.tariefgrens is None
        else _fragment(_dutch_threshold, assessment.tariefgrens)[assessment.language],
        as_of=assessment.as_of,
        ruleset=_fragment(_ruleset_body, ruleset),
        criteria=_fragment(_dutch_criteria, assessment.results),
        unanswered=tuple(assessment.unanswered),
        decided_by=_dutch_decided(assessment, ruleset, phrases),
        deciding_facts=assessment.decided.facts if assessment.decided else (),
        next_questions=_dutch_questions(assessment, ruleset, phrases),
        could_change=_dutch_questions(assessment, ruleset, phrases, assessment.could_change),
        **_closing(
            assessment,
            ruleset.weighing,
            {question.input: (question.kind, question.true_when) for question in ruleset.questions},
            phrases,
            tracked,
            created_at,
            livemode,
        ),
    )


def cross_border_tariefgrens(entry: CrossBorderTariefgrens, language: Language) -> CrossBorderTariefgrensOut:
    return CrossBorderTariefgrensOut(
        value=float(entry.value),
        multiplier=float(entry.multiplier),
        min_wage_hourly=float(entry.min_wage_hourly),
        min_wage_valid_from=entry.min_wage_valid_from,
        valid_from=entry.valid_from,
        basis=entry.basis[language],
        source_url=link(entry.source_url),
    )


def _cross_border_threshold(entry: CrossBorderTariefgrens) -> tuple[CrossBorderTariefgrensOut, ...]:
    """The benchmark in each language, indexed by `Language` (its basis is translated)."""
    return tuple(cross_border_tariefgrens(entry, language) for language in Language)


def _cross_border_basis(criterion: CrossBorderCriterion) -> LegalBasisBody:
    return LegalBasisBody(criterion.basis, link(criterion.source_url))


def _cross_border_decided(assessment: CrossBorderAssessment, phrases: Phrases) -> tuple[DecidingRuleBody, ...]:
    ruleset, language = assessment.ruleset, assessment.language
    if assessment.verdict is Verdict.risky:
        return ()
    if assessment.decided_by:
        return tuple(_rule_body(rule, language) for rule in assessment.decided_by)
    unsafe_shares = [r.share_at_least_percent or 100 for r in assessment.fired if r.verdict is Verdict.unsafe]
    if assessment.verdict is Verdict.unsafe and unsafe_shares:
        source = link(ruleset.sources[0].url)
        share = min(unsafe_shares)
        return (_weighing_rule(assessment.verdict, assessment.score, share, ruleset.law, source, phrases, language),)
    return (_balance_rule(assessment.verdict, ruleset.weighing, assessment.balance, language),)


def _cross_border_questions(
    assessment: CrossBorderAssessment, phrases: Phrases, found: tuple[RankedQuestion, ...] | None = None
) -> tuple[NextQuestionBody, ...]:
    """`next_questions` (or, given `found`, those questions) written out in the verdict's language."""
    source = assessment.next_questions if found is None else found
    return _in_language(source, assessment.language, lambda: _cross_border_questions_now(assessment, phrases, source))


def _cross_border_questions_now(
    assessment: CrossBorderAssessment, phrases: Phrases, source: tuple[RankedQuestion, ...]
) -> tuple[NextQuestionBody, ...]:
    criteria = {criterion.name: criterion for criterion in assessment.ruleset.criteria}
    language = assessment.language
    return tuple(
        next_question(
            found,
            "boolean",
            criteria[found.input].question[language],
            _fragment(_cross_border_basis, criteria[found.input]),
            assessment.verdict,
            phrases,
            language,
            criteria[found.input].true_when,
        )
        for found in source
    )


def cross_border_verdict(
    assessment: CrossBorderAssessment,
    phrases: Phrases,
    *,
    id: uuid.UUID,
    created_at: dt.datetime,
    tracked: Tracked,
    livemode: bool,
) -> CrossBorderVerdictBody:
    """The CrossBorderVerdict body."""
    ruleset, language = assessment.ruleset, assessment.language
    threshold = assessment.tariefgrens
    return CrossBorderVerdictBody(
        id=id,
        country=ruleset.country,
        verdict=assessment.verdict,
        law=ruleset.law,
        tariefgrens_min_eur=None if threshold is None else float(threshold.value),
        advice=assessment.advice,
        score=assessment.score,
        criteria_met=assessment.met,
        criteria_not_provided=assessment.not_provided,
        unanswered=assessment.not_provided,
        rules_applied=(
            *(RuleAppliedBody(rule.verdict, rule.reason[language]) for rule in assessment.decided_by),
            *(RuleAppliedBody(rule.verdict, rule.reason[language]) for rule in assessment.fired),
        ),
        tariefgrens=None if threshold is None else _fragment(_cross_border_threshold, threshold)[language],
        as_of=assessment.as_of,
        ruleset=_fragment(_ruleset_body, ruleset),
        criteria=tuple(
            CrossBorderCriterionBody(
                name=criterion.name,
                group=criterion.group,
                weight=criterion.weight,
                legal_basis=_fragment(_cross_border_basis, criterion),
                met=criterion.name in assessment.met,
                provided=criterion.name not in assessment.not_provided,
            )
            for criterion in ruleset.criteria
        ),
        decided_by=_cross_border_decided(assessment, phrases),
        deciding_facts=assessment.decided_facts,
        next_questions=_cross_border_questions(assessment, phrases),
        could_change=_cross_border_questions(assessment, phrases, assessment.could_change),
        **_closing(
            assessment,
            ruleset.weighing,
            {criterion.name: ("boolean", criterion.true_when) for criterion in ruleset.criteria},
            phrases,
            tracked,
            created_at,
            livemode,
        ),
    )


def criteria_catalogue(ruleset: CrossBorderRuleset, language: Language, *, livemode: bool) -> CriteriaCatalogue:
    """The catalogue with its descriptions and rule reasons in `language`."""
    return CriteriaCatalogue(
        country=ruleset.country,
        law=ruleset.law,
        source_note=ruleset.source_note[language],
        ruleset=ruleset_ref(ruleset),
        criteria=[
            CatalogueCriterion(
                name=criterion.name,
                group=criterion.group,
                weight=criterion.weight,
                description=criterion.description[language],
                legal_basis=LegalBasis(text=criterion.basis, source_url=link(criterion.source_url)),
            )
            for criterion in ruleset.criteria
        ],
        decisive=[decisive_rule(rule, language) for rule in ruleset.decisive],
        rules=[
            CatalogueRule(
                verdict=rule.verdict,
                reason=rule.reason[language],
                all_of=list(rule.all_of),
                at_least=rule.at_least,
                of=list(rule.of),
                share_at_least_percent=rule.share_at_least_percent,
            )
            for rule in ruleset.rules
        ],
        tariefgrens=[cross_border_tariefgrens(entry, language) for entry in ruleset.tariefgrens],
        livemode=livemode,
    )


def classification_summary(record: Listed) -> ClassificationSummary:
    return ClassificationSummary(
        id=record.id,
        kind=record.kind,
        country=record.country,
        verdict=Verdict(record.verdict),
        original_verdict=Verdict(record.original_verdict),
        ruleset=RulesetRef(
            id=record.ruleset_id,
            version=dt.date.fromisoformat(record.ruleset_version),
            valid_from=record.ruleset_valid_from,
        ),
        reference=record.reference,
        metadata=record.client_metadata or {},
        monitor=record.monitor,
        created_at=record.created_at,
        livemode=record.environment is Environment.live,
    )


def classification_record(found: RecordWithHistory) -> ClassificationRecord:
    record, history = found.record, found.history
    livemode = record.environment is Environment.live
    return ClassificationRecord.model_validate(
        {
            "id": record.id,
            "kind": record.kind,
            "created_at": record.created_at,
            "language": record.language,
            "reference": record.reference,
            "metadata": record.client_metadata or {},
            "monitor": record.monitor,
            "verdict": history[-1].verdict if history else record.result["verdict"],
            "history": [
                {
                    "id": later.id,
                    "verdict": later.verdict,
                    "previous_verdict": later.previous_verdict,
                    "supersedes": later.supersedes_id,
                    "as_of": later.as_of,
                    "ruleset": later.result["ruleset"],
                    "created_at": later.created_at,
                    "result": _with_livemode(later.result, livemode),
                }
                for later in history
            ],
            "ruleset": record.result["ruleset"],
            "request": record.request,
            "result": _with_livemode(record.result, livemode),
            "livemode": livemode,
        }
    )


def _with_livemode(verdict: dict[str, Any], livemode: bool) -> dict[str, Any]:
    """A stored verdict as answered; one kept before verdicts said `livemode` gets it from its record."""
    return verdict if "livemode" in verdict else {**verdict, "livemode": livemode}


def _facts(facts: tuple[Fact, ...]) -> list[FactOut]:
    return [
        FactOut(
            field=fact.input,
            is_=fact.is_,
            at_least=None if fact.at_least is None else float(fact.at_least),
            at_most=None if fact.at_most is None else float(fact.at_most),
        )
        for fact in facts
    ]


def decisive_rule(rule: DecisiveRule, language: Language) -> DecisiveRuleOut:
    return DecisiveRuleOut(
        id=rule.id,
        verdict=rule.verdict,
        reason=rule.reason[language],
        all_of=_facts(rule.all_of),
        any_of=_facts(rule.any_of),
        at_least=rule.at_least,
        of=_facts(rule.of),
        unless=_facts(rule.unless),
        statutory=rule.statutory,
        legal_basis=LegalBasis(text=rule.basis, source_url=link(rule.source_url)),
    )


def question_catalogue(found: Questionnaire, language: Language, *, livemode: bool) -> QuestionCatalogue:
    return QuestionCatalogue(
        test=found.test.value,
        ruleset=ruleset_ref(found.ruleset),
        questions=[
            QuestionOut(
                field=question.field,
                kind=question.kind,
                question=question.text,
                explanation=question.explanation,
                legal_basis=LegalBasis(text=question.basis, source_url=question.source_url),
                true_when=question.true_when,
            )
            for question in found.questions
        ],
        decisive=[decisive_rule(rule, language) for rule in found.decisive],
        livemode=livemode,
    )
