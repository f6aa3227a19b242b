"""The contract's example of a dossier: the stored verdict of the classification example, asked with an API token."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from compliance_api.accounts.models import User
from compliance_api.auth.models import ApiToken
from compliance_api.classify import examples as classify_examples
from compliance_api.classify.models import Classification, RecordWithHistory
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import ClassificationRecord
from compliance_api.dossier.document import Signers, build_dossier
from compliance_api.dossier.service import Asker, DossierFacts
from compliance_api.kit.environment import Environment

_ACCOUNT = User(id=uuid.UUID("5d1b8f0e-7c2a-4e61-9a3b-0c4d2e6f8a10"), email="payroll@example.com")
_TOKEN = ApiToken(id=uuid.UUID("8e2f6a4c-1b3d-4f5e-8a7b-9c0d1e2f3a4b"), name="payroll system", last4="x9Qa")
_KID = "O1Xc7gM3mJ0bYb3dXq3mQk3u4JbW2hXq0wQn3D1c9uA"
# A JWS has three base64url parts; the example's are shortened placeholders, not a verifiable signature.
_JWS = (
    "eyJhbGciOiJFZERTQSIsImtpZCI6Ik8xWGM3Z00zbUowYlliM2RYcTNtUWszdTRKYlcyaFhxMHdRbjNEMWM5dUEifQ.eyJ…In0.c2lnbmF0dXJl…"
)


def _example() -> dict[str, Any]:
    example = classify_examples.CLASSIFICATION["responses"]["200"]["content"]["application/json"]["example"]
    record = ClassificationRecord.model_validate(example)
    row = Classification(
        id=record.id,
        kind=record.kind,
        created_at=record.created_at,
        language=record.language,
        reference=record.reference,
        client_metadata=record.metadata,
        monitor=record.monitor,
        request=record.request,
        result=record.result.model_dump(mode="json"),
    )
    asker = Asker(
        account=_ACCOUNT,
        token_id=_TOKEN.id,
        token=_TOKEN,
        dashboard_user_id=None,
        dashboard_user=None,
        request_id="req_9c0f72a132838398f6c0d8d7",
    )
    dossier = build_dossier(
        DossierFacts(Environment.live, RecordWithHistory(row, []), asker),
        packaged_rulesets(),
        signers=Signers(
            kid=_KID,
            jwks_url="http://127.0.0.1:8000/.well-known/jwks.json",
            certificates_url="http://127.0.0.1:8000/.well-known/dossier-certificates.pem",
            certificate_sha256="3f1c2a9e5b7d40c8a6e2f19b0d4c7a58e3b91f6d2c0a8e47b5f3d19c6a2e0b74",
        ),
        issued_at=record.created_at + dt.timedelta(days=30),
    )
    return {"dossier": dossier.model_dump(mode="json"), "jws": _JWS}


DOSSIER_OPERATION: dict[str, Any] = {"responses": {"200": {"content": {"application/json": {"example": _example()}}}}}
