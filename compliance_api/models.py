"""Imports every domain's models so that Alembic sees the whole schema; defines nothing."""

from compliance_api.accounts.models import User
from compliance_api.auth.models import ApiToken
from compliance_api.classify.models import Classification
from compliance_api.dac7.models import Dac7Activity, Dac7Grant, Dac7Report, Dac7Seller
from compliance_api.dashboard.models import AccountPassword, DashboardSession, PasswordReset
from compliance_api.db import Base
from compliance_api.events.models import OutboxEvent
from compliance_api.idempotency.models import IdempotencyRecord
from compliance_api.passport.models import Passport, PassportShare, PassportShareView, PassportVerification
from compliance_api.rates.models import RateBenchmark, RateImport, RateObservation
from compliance_api.requestlog.models import ApiRequest
from compliance_api.webhooks.models import WebhookDelivery, WebhookEndpoint
from compliance_api.wtta.models import WttaAdmission, WttaImport, WttaStatusChange

__all__ = [
    "AccountPassword",
    "ApiRequest",
    "ApiToken",
    "Base",
    "Classification",
    "Dac7Activity",
    "Dac7Grant",
    "Dac7Report",
    "Dac7Seller",
    "DashboardSession",
    "IdempotencyRecord",
    "OutboxEvent",
    "Passport",
    "PassportShare",
    "PassportShareView",
    "PassportVerification",
    "PasswordReset",
    "RateBenchmark",
    "RateImport",
    "RateObservation",
    "User",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WttaAdmission",
    "WttaImport",
    "WttaStatusChange",
]
