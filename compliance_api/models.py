"""Imports every domain's models so that Alembic sees the whole schema; defines nothing."""

from compliance_api.accounts.models import User
from compliance_api.auth.models import ApiToken
from compliance_api.classify.models import Classification
from compliance_api.db import Base
from compliance_api.kit.idempotency import IdempotencyRecord
from compliance_api.passport.models import Passport, PassportShare, PassportShareView, PassportVerification

__all__ = [
    "ApiToken",
    "Base",
    "Classification",
    "IdempotencyRecord",
    "Passport",
    "PassportShare",
    "PassportShareView",
    "PassportVerification",
    "User",
]
