"""The dossier of a classification: what an auditor reads (as PDF) and what is signed (as JSON)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import Field

from compliance_api.classify.language import LanguageCode
from compliance_api.classify.models import ClassificationKind
from compliance_api.classify.schemas import AppliedRule, LegalBasis, RulesetRef
from compliance_api.classify.verdict import Country, Verdict
from compliance_api.kit.schemas import ResponseSchema

Answer = bool | int | float | None


class DossierTest(ResponseSchema):
    kind: ClassificationKind
    country: Country | None = Field(description="The cross-border test's country; null for the Dutch test.")
    name: str = Field(description="The test, in the dossier's language.")


class DossierToken(ResponseSchema):
    id: uuid.UUID
    name: str | None = Field(description="The token's name; null if the token no longer exists.")
    last4: str | None


class DossierUser(ResponseSchema):
    id: uuid.UUID | None = Field(description="Null if the user no longer exists.")
    email: str | None


class DossierAsker(ResponseSchema):
    """Who asked for the verdict, when, and under which request id."""

    account: DossierUser = Field(description="The account the classification belongs to.")
    channel: Literal["api", "dashboard"]
    token: DossierToken | None = Field(description="The API token that asked (channel `api`).")
    dashboard_user: DossierUser | None = Field(description="The signed-in user who submitted it (channel `dashboard`).")
    asked_at: dt.datetime
    request_id: str | None = Field(
        description="The `X-Request-Id` the verdict was answered under; null for verdicts from before it was kept."
    )


class DossierQuestion(ResponseSchema):
    name: str = Field(description="The engagement field (Dutch test) or criterion (cross-border test) it answers.")
    question: str = Field(description="The question, in the dossier's language.")
    answered: bool
    answer: Answer = Field(description="The answer as sent; null when not answered.")
    true_when: Literal["yes", "no"] = Field(
        default="yes",
        title="The answer for a true value",
        description="The answer to `question` that a true value stands for (`no`: an inverted question).",
    )


class DossierCriterion(ResponseSchema):
    name: str
    label: str = Field(
        default="",
        description="What the criterion looks at, in the dossier's language: the question it reads (Dutch test) or "
        "its description (cross-border test).",
    )
    group: str
    input: str | None = Field(description="The question it reads (Dutch test); null for cross-border criteria.")
    answered: bool
    finding: bool = Field(description="Hit (Dutch test) or met (cross-border test): points to employment.")
    weight: int
    legal_basis: LegalBasis


class DossierVerdict(ResponseSchema):
    current: Verdict = Field(description="After any re-score.")
    original: Verdict = Field(description="As first answered.")
    score: int
    as_of: dt.date = Field(description="The date whose law and thresholds applied.")
    advice: str
    unanswered: list[str]
    presumption_of_employment: bool | None = Field(description="Dutch test: the rate is at or below the tariefgrens.")
    rules_applied: list[AppliedRule] = Field(description="Cross-border test: the rules that fired.")


class DossierRuleset(RulesetRef):
    law: str | None
    source_note: str | None


class DossierThreshold(ResponseSchema):
    """The Dutch tariefgrens, or the cross-border rate benchmark, in force on `as_of`."""

    name: Literal["tariefgrens", "rate_benchmark"]
    amount_eur: float
    valid_from: dt.date
    legal_status: str | None
    basis: str
    source_url: str | None
    multiplier: float | None
    min_wage_hourly: float | None


class DossierChange(ResponseSchema):
    what: Literal["ruleset", "threshold", "criterion", "rule"]
    name: str
    previous: str | float | bool | None
    new: str | float | bool | None


class DossierRescore(ResponseSchema):
    id: uuid.UUID
    verdict: Verdict
    previous_verdict: Verdict
    as_of: dt.date
    ruleset: RulesetRef
    created_at: dt.datetime
    changes: list[DossierChange] = Field(description="What made the difference against the verdict it replaced.")


class DossierVerification(ResponseSchema):
    algorithm: Literal["EdDSA"]
    kid: str = Field(description="The signing key's id (RFC 7638 thumbprint).")
    jwks_url: str = Field(description="The public keys of the environment that signed.")
    pdf_certificates_url: str = Field(
        description="The certificates of the environment's PDF signatures (PEM), published beside the keys."
    )
    pdf_certificate_sha256: str = Field(
        description="SHA-256 fingerprint (hex) of the certificate that signs this dossier's PDF as a PDF."
    )


class Dossier(ResponseSchema):
    """Everything the PDF shows; the JWS payload is this object as compact JSON with sorted keys."""

    format: Literal["compliance-api.dossier/1"] = Field(
        default="compliance-api.dossier/1", description="What this document is, and the version of its shape."
    )
    classification_id: uuid.UUID
    environment: Literal["live", "test"]
    livemode: bool
    issued_at: dt.datetime
    language: LanguageCode
    test: DossierTest
    reference: str | None
    metadata: dict[str, str]
    monitor: bool
    asked: DossierAsker
    questions: list[DossierQuestion] = Field(description="Every question of the test, answered or not.")
    verdict: DossierVerdict
    criteria: list[DossierCriterion]
    ruleset: DossierRuleset
    threshold: DossierThreshold | None
    history: list[DossierRescore] = Field(description="Re-scores that changed the verdict, oldest first.")
    verification: DossierVerification


class SignedDossier(ResponseSchema):
    dossier: Dossier
    jws: str = Field(
        description="A compact JWS (EdDSA, `kid` in the header) whose payload is `dossier` as compact JSON with "
        "sorted keys; verify it against `dossier.verification.jwks_url` (`/.well-known/jwks.json` of the host)."
    )
