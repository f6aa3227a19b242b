"""Shape the facts of a classification into its dossier, and sign it.

The questions are read at run time from the rulesets (`classify.questions`: the Dutch test's questions, a country's
criteria), so a question added there appears in every dossier, answered or not; an older verdict that never saw it
shows it as not answered.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import orjson
from joserfc.jwk import OKPKey

from compliance_api.classify.language import CODES, Language
from compliance_api.classify.models import ClassificationKind
from compliance_api.classify.questions import Test, questionnaire
from compliance_api.classify.rescore import causes
from compliance_api.classify.ruleset import Rulesets
from compliance_api.classify.schemas import ClassificationRecord, CrossBorderVerdict, ZWVerdict
from compliance_api.classify.views import classification_record
from compliance_api.dossier.schemas import (
    Dossier,
    DossierAsker,
    DossierChange,
    DossierCriterion,
    DossierQuestion,
    DossierRescore,
    DossierRuleset,
    DossierTest,
    DossierThreshold,
    DossierToken,
    DossierUser,
    DossierVerdict,
    DossierVerification,
)
from compliance_api.dossier.service import Asker, DossierFacts
from compliance_api.dossier.texts import DossierTexts, dossier_texts
from compliance_api.kit.addresses import Bases
from compliance_api.kit.environment import Environment
from compliance_api.passport.signing import ALGORITHM, sign_with

JWKS_PATH = "/.well-known/jwks.json"
CERTIFICATES_PATH = "/.well-known/dossier-certificates.pem"


def _base_url(bases: Bases, environment: Environment) -> str:
    """An environment's own base URL (production's when it has none)."""
    own = bases.sandbox if environment is Environment.test else bases.production
    base_url = own if own is not None else bases.production or bases.sandbox or ""
    return base_url.rstrip("/")


def jwks_url(bases: Bases, environment: Environment) -> str:
    """Where an environment's public keys are published."""
    return _base_url(bases, environment) + JWKS_PATH


def certificates_url(bases: Bases, environment: Environment) -> str:
    """Where an environment's PDF signing certificates are published, beside its keys."""
    return _base_url(bases, environment) + CERTIFICATES_PATH


def language_of(record: ClassificationRecord) -> Language:
    return CODES[record.language]


def _answered(value: Any) -> bool:
    return value is not None


def _dutch_questions(record: ClassificationRecord, rulesets: Rulesets, language: Language) -> list[DossierQuestion]:
    """Every question of the Dutch test as the ruleset asks it (`GET /v1/classify/questions`), with the answer sent."""
    given = record.request.get("engagement") or {}
    return [
        DossierQuestion(
            name=question.field,
            question=question.text,
            answered=_answered(given.get(question.field)),
            answer=given.get(question.field),
        )
        for question in questionnaire(rulesets, Test.NL, language).questions
    ]


def _cross_border_questions(
    record: ClassificationRecord, result: CrossBorderVerdict, rulesets: Rulesets, language: Language
) -> list[DossierQuestion]:
    given: dict[str, Any] = record.request.get("criteria") or {}
    ruleset = rulesets.cross_border[result.country]
    asked = [(c.name, c.question[language], c.true_when) for c in ruleset.criteria]
    known = {name for name, _, _ in asked}
    asked += [(name, name, "yes") for name in given if name not in known]  # a criterion since removed from the ruleset
    return [
        DossierQuestion(
            name=name, question=text, answered=_answered(given.get(name)), answer=given.get(name), true_when=true_when
        )
        for name, text, true_when in asked
    ]


def _criteria(result: ZWVerdict | CrossBorderVerdict, rulesets: Rulesets, language: Language) -> list[DossierCriterion]:
    """The criteria of the verdict, each labelled in the dossier's language (by its id if the ruleset has since
    dropped it)."""
    if isinstance(result, ZWVerdict):
        asks = {q.input: q.text[language] for q in rulesets.dutch.questions}
        return [
            DossierCriterion(
                name=c.id,
                label=asks.get(c.input, c.id),
                group=c.group,
                input=c.input,
                answered=c.answered,
                finding=c.hit,
                weight=c.weight,
                legal_basis=c.legal_basis,
            )
            for c in result.criteria
        ]
    describes = {c.name: c.description[language] for c in rulesets.cross_border[result.country].criteria}
    return [
        DossierCriterion(
            name=c.name,
            label=describes.get(c.name, c.name),
            group=c.group,
            input=None,
            answered=c.provided,
            finding=c.met,
            weight=c.weight,
            legal_basis=c.legal_basis,
        )
        for c in result.criteria
    ]


def _threshold(result: ZWVerdict | CrossBorderVerdict) -> DossierThreshold | None:
    if isinstance(result, ZWVerdict):
        dutch = result.tariefgrens
        if dutch is None:
            return None
        return DossierThreshold(
            name="tariefgrens",
            amount_eur=dutch.amount_eur,
            valid_from=dutch.valid_from,
            legal_status=dutch.legal_status,
            basis=dutch.basis,
            source_url=dutch.source_url,
            multiplier=None,
            min_wage_hourly=None,
        )
    cross = result.tariefgrens
    if cross is None:
        return None
    return DossierThreshold(
        name="rate_benchmark",
        amount_eur=cross.value,
        valid_from=cross.valid_from,
        legal_status=None,
        basis=cross.basis,
        source_url=cross.source_url,
        multiplier=cross.multiplier,
        min_wage_hourly=cross.min_wage_hourly,
    )


def _ruleset(result: ZWVerdict | CrossBorderVerdict, rulesets: Rulesets, language: Language) -> DossierRuleset:
    """The ruleset that answered; its law and source note from the packaged file when that is the same version."""
    ref = result.ruleset
    packaged = rulesets.dutch if isinstance(result, ZWVerdict) else rulesets.cross_border[result.country]
    same = packaged.id == ref.id and packaged.version == ref.version
    law = result.law if isinstance(result, CrossBorderVerdict) else (packaged.law if same else None)
    return DossierRuleset(
        id=ref.id,
        version=ref.version,
        valid_from=ref.valid_from,
        law=law,
        source_note=packaged.source_note[language] if same else None,
    )


def _history(record: ClassificationRecord) -> list[DossierRescore]:
    previous = record.result.model_dump(mode="json")
    found: list[DossierRescore] = []
    for later in record.history:
        new = later.result.model_dump(mode="json")
        found.append(
            DossierRescore(
                id=later.id,
                verdict=later.verdict,
                previous_verdict=later.previous_verdict,
                as_of=later.as_of,
                ruleset=later.ruleset,
                created_at=later.created_at,
                changes=[DossierChange.model_validate(change) for change in causes(previous, new)],
            )
        )
        previous = new
    return found


def _asked(record: ClassificationRecord, asker: Asker) -> DossierAsker:
    account = asker.account
    dashboard = asker.dashboard_user_id is not None or asker.token_id is None
    return DossierAsker(
        account=DossierUser(id=account.id if account else None, email=account.email if account else None),
        channel="dashboard" if dashboard else "api",
        token=(
            DossierToken(
                id=asker.token_id,
                name=asker.token.name if asker.token else None,
                last4=asker.token.last4 if asker.token else None,
            )
            if asker.token_id
            else None
        ),
        dashboard_user=(
            DossierUser(
                id=asker.dashboard_user.id if asker.dashboard_user else None,
                email=asker.dashboard_user.email if asker.dashboard_user else None,
            )
            if dashboard
            else None
        ),
        asked_at=record.created_at,
        request_id=asker.request_id,
    )


def _test(record: ClassificationRecord, language: Language, texts: DossierTexts) -> DossierTest:
    result = record.result
    if isinstance(result, CrossBorderVerdict):
        return DossierTest(kind=record.kind, country=result.country, name=texts[language, f"test_{result.country}"])
    return DossierTest(kind=record.kind, country=None, name=texts[language, "test_zelfstandigenwet"])


@dataclass(frozen=True, slots=True)
class Signers:
    """Who signs a dossier and where an auditor finds them: the JWS key and the PDF signature's certificate."""

    kid: str
    jwks_url: str
    certificates_url: str
    certificate_sha256: str


def build_dossier(facts: DossierFacts, rulesets: Rulesets, *, signers: Signers, issued_at: dt.datetime) -> Dossier:
    """The dossier of one classification, as of `issued_at`, to be signed by `signers`."""
    record, texts = classification_record(facts.found), dossier_texts()
    language, result = language_of(record), record.result
    if record.kind is ClassificationKind.zelfstandigenwet:
        questions = _dutch_questions(record, rulesets, language)
    else:
        assert isinstance(result, CrossBorderVerdict)
        questions = _cross_border_questions(record, result, rulesets, language)
    return Dossier(
        classification_id=record.id,
        environment=facts.environment.value,
        livemode=facts.environment is Environment.live,
        issued_at=issued_at,
        language=record.language,
        test=_test(record, language, texts),
        reference=record.reference,
        metadata=record.metadata,
        monitor=record.monitor,
        asked=_asked(record, facts.asker),
        questions=questions,
        verdict=DossierVerdict(
            current=record.verdict,
            original=result.verdict,
            score=result.score,
            as_of=result.as_of,
            advice=result.advice,
            unanswered=[str(name) for name in result.unanswered],
            presumption_of_employment=result.presumption_of_employment if isinstance(result, ZWVerdict) else None,
            rules_applied=result.rules_applied if isinstance(result, CrossBorderVerdict) else [],
        ),
        criteria=_criteria(result, rulesets, language),
        ruleset=_ruleset(result, rulesets, language),
        threshold=_threshold(result),
        history=_history(record),
        verification=DossierVerification(
            algorithm=ALGORITHM,
            kid=signers.kid,
            jwks_url=signers.jwks_url,
            pdf_certificates_url=signers.certificates_url,
            pdf_certificate_sha256=signers.certificate_sha256,
        ),
    )


def payload(dossier: Dossier) -> bytes:
    """The signed bytes: the dossier as compact JSON with sorted keys."""
    return orjson.dumps(dossier.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)


def sign(dossier: Dossier, key: OKPKey) -> str:
    """A compact JWS over the dossier with `key` (the environment's signing key, named in `verification.kid`)."""
    return sign_with(key, payload(dossier))
