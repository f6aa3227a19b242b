"""The questions of the dashboard's assessment, what a verdict's answers decided, and what to answer next.

The questions are the classifier's own (`classify.questions`: the Dutch ruleset's questions, each cross-border
country's criteria), in the reader's language, with their explanations and legal sources. What decided a verdict and
what to answer next are read off the stored verdict (`decided_by`, `deciding_facts`, `next_questions`), so the page
says what the API said.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from babel.numbers import NumberFormatError, parse_decimal
from pydantic import ValidationError
from starlette.datastructures import FormData

from compliance_api.classify import questions as classify_questions
from compliance_api.classify.questions import Test
from compliance_api.classify.ruleset import Rulesets
from compliance_api.classify.schemas import CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.dashboard.i18n import N_, Translator
from compliance_api.kit.schemas import NUL

MAX_REFERENCE_LENGTH = 200
Kind = Literal["boolean", "number", "integer"]


class QuestionnaireKind(StrEnum):
    """The tests a person can take: the Dutch one, or a country's cross-border one."""

    zelfstandigenwet = "zelfstandigenwet"
    FR = "FR"
    DE = "DE"
    BE = "BE"

    @property
    def test(self) -> Test:
        return Test.NL if self is QuestionnaireKind.zelfstandigenwet else Test(self.value)


TEST_NAMES = {
    QuestionnaireKind.zelfstandigenwet: N_("Dutch test (Zelfstandigenwet)"),
    QuestionnaireKind.FR: N_("Cross-border: France"),
    QuestionnaireKind.DE: N_("Cross-border: Germany"),
    QuestionnaireKind.BE: N_("Cross-border: Belgium"),
}


@dataclass(frozen=True, slots=True)
class Limits:
    """What a number field takes: the bounds of the API's request schema, and the step of the form's field."""

    minimum: float
    maximum: float
    step: str = "1"


NUMBER_LIMITS = {
    "hourly_rate_eur": Limits(0, 9999.99, "0.01"),
    "months_duration": Limits(0, 600),
    "days_per_week": Limits(0, 7),
    "other_clients_count": Limits(0, 100_000),
}
"""The Dutch figures' bounds as `ZelfstandigenwetRequest` checks them (a test holds them together), to say in an
error what the field takes."""


@dataclass(frozen=True, slots=True)
class FormQuestion:
    """One question in the reader's language, with its legal source as the source names it."""

    field: str
    kind: Kind
    text: str
    explanation: str
    legal_basis: str
    source_url: str | None
    limits: Limits | None
    true_when: str = "yes"
    """The answer that sets the field to true: `no` where the question asks the positive of a negatively named field."""

    def value_of(self, answer: bool) -> bool:
        """The field's value for a yes (True) or no (False) to this question."""
        return answer == (self.true_when == "yes")


def questions_for(
    questionnaire: QuestionnaireKind, rulesets: Rulesets, translator: Translator
) -> tuple[FormQuestion, ...]:
    """The questions of `questionnaire`, in the order of its ruleset, as `GET /v1/classify/questions` asks them."""
    asked = classify_questions.questionnaire(rulesets, questionnaire.test, translator.language)
    return tuple(
        FormQuestion(
            q.field,
            q.kind,
            q.text,
            q.explanation
            if questionnaire is QuestionnaireKind.zelfstandigenwet
            # a cross-border criterion's advice says what to do when it is met: after a yes, or a no where inverted
            else translator.gettext("If so: %(advice)s", advice=q.explanation)
            if q.true_when == "yes"
            else translator.gettext("If not: %(advice)s", advice=q.explanation),
            q.basis,
            q.source_url,
            NUMBER_LIMITS.get(q.field),
            q.true_when,
        )
        for q in asked.questions
    )


def questionnaire_of(kind: str, country: str | None) -> QuestionnaireKind:
    """The test of a stored classification (its kind, and its country for a cross-border one)."""
    return QuestionnaireKind(country) if kind == "cross_border" and country else QuestionnaireKind.zelfstandigenwet


def answers_of(
    questionnaire: QuestionnaireKind,
    questions: tuple[FormQuestion, ...],
    request: Mapping[str, Any],
    translator: Translator,
) -> dict[str, str]:
    """A stored request body as the form's values: `yes`/`no` for booleans (as each question asks), numbers as the
    reader writes them, `unknown` for a question answered "don't know"; absent: not answered."""
    given = request.get("engagement" if questionnaire is QuestionnaireKind.zelfstandigenwet else "criteria") or {}
    asks = {q.field: q for q in questions}
    values = dict.fromkeys(request.get("dont_know") or (), "unknown")
    for name, value in given.items():
        if isinstance(value, bool):
            question = asks.get(name)
            values[name] = "yes" if (question.value_of(value) if question else value) else "no"
        elif isinstance(value, int | float):
            values[name] = translator.number(value, 0 if float(value).is_integer() else 2, grouped=False)
    return values


@dataclass(frozen=True, slots=True)
class Submission:
    """A submitted form: the values as typed (to show again) and what is wrong with them, by field."""

    values: dict[str, str]
    reference: str
    errors: dict[str, str]
    body: ZelfstandigenwetRequest | CrossBorderRequest | None


def _number(text: str, kind: Kind, translator: Translator) -> float | int | str:
    """A typed number as the request wants it: as the reader's language writes it (grouping included), else with a
    decimal point or a lone decimal comma; the text itself when it is no number, which validation then refuses."""
    try:
        parsed = float(parse_decimal(text, locale=translator.locale, strict=True))
    except NumberFormatError:
        plain = "".join(text.split())
        if plain.count(",") == 1 and "." not in plain:
            plain = plain.replace(",", ".")
        try:
            parsed = float(plain)
        except ValueError:
            return text
    if not math.isfinite(parsed):
        return text
    return int(parsed) if kind == "integer" and parsed.is_integer() else parsed


def _problem(question: FormQuestion, translator: Translator) -> str:
    limits = question.limits
    if question.kind == "boolean" or limits is None:
        return translator.gettext("Choose yes, no or don't know.")
    if question.kind == "integer":
        return translator.gettext(
            "Enter a whole number from %(minimum)s to %(maximum)s, or leave it empty if you don't know.",
            minimum=translator.number(limits.minimum),
            maximum=translator.number(limits.maximum),
        )
    return translator.gettext(
        "Enter an amount from %(minimum)s to %(maximum)s, or leave it empty if you don't know.",
        minimum=translator.number(limits.minimum, 2),
        maximum=translator.number(limits.maximum, 2),
    )


def submission(
    questionnaire: QuestionnaireKind,
    questions: tuple[FormQuestion, ...],
    form: FormData,
    translator: Translator,
) -> Submission:
    """The API's request body for the answers of a form, checked by the API's own request schema."""
    typed = {q.field: _text(form, q.field).strip() for q in questions}
    raw_reference = _text(form, "reference").strip()
    errors: dict[str, str] = {}
    answers: dict[str, Any] = {}
    dont_know: list[str] = []
    for question in questions:
        value = typed[question.field]
        if question.kind == "boolean":
            if value in {"yes", "no"}:
                answers[question.field] = question.value_of(value == "yes")
            elif value == "unknown":
                dont_know.append(question.field)
            elif value:
                errors[question.field] = _problem(question, translator)
        elif value:
            answers[question.field] = _number(value, question.kind, translator)
    values = {name: value.replace(NUL, "") for name, value in typed.items() if value}
    reference = raw_reference.replace(NUL, "")
    body: dict[str, Any] = {}
    if raw_reference:
        body["reference"] = raw_reference
    if dont_know:
        body["dont_know"] = dont_know  # not ranked first among the next questions again
    if questionnaire is QuestionnaireKind.zelfstandigenwet:
        body["engagement"] = answers
    else:
        body |= {"country": questionnaire.value, "criteria": answers}
    schema = ZelfstandigenwetRequest if questionnaire is QuestionnaireKind.zelfstandigenwet else CrossBorderRequest
    try:
        checked = schema.model_validate(body)
    except ValidationError as exc:
        by_field = {q.field: q for q in questions}
        for error in exc.errors():
            location = [str(part) for part in error["loc"]]
            if location and location[0] == "reference":
                errors["reference"] = translator.gettext(
                    "Give a reference of at most %(maximum)s characters.", maximum=MAX_REFERENCE_LENGTH
                )
            found = next((by_field[part] for part in location if part in by_field), None)
            if found is not None:
                errors[found.field] = _problem(found, translator)
            elif not (location and location[0] == "reference"):
                errors.setdefault("form", translator.gettext("The answers could not be read: send the form again."))
        return Submission(values, reference, errors, None)
    return Submission(values, reference, errors, None if errors else checked)


def _text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value[: MAX_REFERENCE_LENGTH + 1] if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class FormFact:
    """Something that decided a verdict: a rule that holds (its reason, in the verdict's language), or a question and
    its answer; each with its legal source as the source names it."""

    text: str
    answer: str | None
    legal_basis: str
    source_url: str | None


def _answer_text(value: object, question: FormQuestion, translator: Translator) -> str:
    if isinstance(value, bool):
        return translator.gettext("yes") if question.value_of(value) else translator.gettext("no")
    if isinstance(value, int | float):
        return translator.number(value)
    return str(value)


def deciding_facts(
    questionnaire: QuestionnaireKind,
    result: Mapping[str, Any],
    request: Mapping[str, Any],
    questions: tuple[FormQuestion, ...],
    translator: Translator,
) -> list[FormFact]:
    """The rules that decided the verdict (`decided_by`), then the answers they read (`deciding_facts`); both empty
    for a `risky` verdict, which no rule decides."""
    given = request.get("engagement" if questionnaire is QuestionnaireKind.zelfstandigenwet else "criteria") or {}
    by_field = {q.field: q for q in questions}
    rules = [
        FormFact(rule["reason"], None, rule["legal_basis"]["text"], rule["legal_basis"]["source_url"])
        for rule in result.get("decided_by") or ()
    ]
    answers = [
        FormFact(q.text, _answer_text(given.get(name), q, translator), q.legal_basis, q.source_url)
        for name in result.get("deciding_facts") or ()
        if (q := by_field.get(name)) is not None
    ]
    return rules + answers


@dataclass(frozen=True, slots=True)
class FormNextQuestion:
    """An unanswered question the verdict ranks for answering next, and where its answers lead (in the verdict's
    language)."""

    question: FormQuestion
    summary: str


@dataclass(frozen=True, slots=True)
class FormAnswerSet:
    """Answers that, given together, change a verdict no single answer changes: each question with its answer (in
    the verdict's language), and the verdict they lead to."""

    answers: tuple[tuple[FormQuestion, str], ...]
    verdict: str


def answer_sets(result: Mapping[str, Any], questions: tuple[FormQuestion, ...]) -> list[FormAnswerSet]:
    """The verdict's `next_answer_sets`, where no single answer changes a `risky` verdict."""
    by_field = {q.field: q for q in questions}
    return [
        FormAnswerSet(
            tuple(
                (by_field[answer["field"]], answer["answer"])
                for answer in found["answers"]
                if answer["field"] in by_field
            ),
            found["verdict"],
        )
        for found in result.get("next_answer_sets") or ()
    ]


def next_questions(result: Mapping[str, Any], questions: tuple[FormQuestion, ...]) -> list[FormNextQuestion]:
    """The verdict's `next_questions`, in its order: the answer most able to move the verdict first."""
    by_field = {q.field: q for q in questions}
    return [
        FormNextQuestion(question, item["summary"])
        for item in result.get("next_questions") or ()
        if (question := by_field.get(item["field"])) is not None
    ]
