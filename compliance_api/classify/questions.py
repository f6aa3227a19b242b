"""The questions of every test, as the questionnaire, the next questions and `GET /v1/classify/questions` ask them.

The Dutch test asks one question per engagement field (the ruleset's `questions`); a cross-border test asks about
each criterion of the country as a question a person can answer yes or no (`true_when` says which answer meets it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from compliance_api.classify.language import Language
from compliance_api.classify.ruleset import DecisiveRule, InputKind, RulesetHeader, Rulesets, link
from compliance_api.classify.verdict import Country


class Test(StrEnum):
    """A test a classification can run: the Dutch one, or a country's cross-border one."""

    NL = "NL"
    FR = "FR"
    DE = "DE"
    BE = "BE"


@dataclass(frozen=True, slots=True)
class Question:
    field: str
    kind: InputKind
    text: str
    explanation: str
    basis: str
    source_url: str | None
    true_when: str


@dataclass(frozen=True, slots=True)
class Questionnaire:
    test: Test
    ruleset: RulesetHeader
    questions: tuple[Question, ...]
    decisive: tuple[DecisiveRule, ...]


def questionnaire(rulesets: Rulesets, test: Test, language: Language) -> Questionnaire:
    """Every question of `test`, in its ruleset's order, written in `language`."""
    if test is Test.NL:
        dutch = rulesets.dutch
        questions = tuple(
            Question(
                q.input, q.kind, q.text[language], q.explanation[language], q.basis, link(q.source_url), q.true_when
            )
            for q in dutch.questions
        )
        return Questionnaire(test, dutch, questions, dutch.decisive)
    ruleset = rulesets.cross_border[Country(test.value)]
    questions = tuple(
        Question(c.name, "boolean", c.question[language], c.advice[language], c.basis, link(c.source_url), c.true_when)
        for c in ruleset.criteria
    )
    return Questionnaire(test, ruleset, questions, ruleset.decisive)
