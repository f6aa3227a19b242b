"""The signed-in user's classification that a verdict page shows: read once for the page that names it in its path,
by the verdict page and the assessment page alike."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import Depends, Request

from compliance_api.classify import service as classify_service
from compliance_api.classify.models import RecordWithHistory
from compliance_api.dashboard.service import Acting
from compliance_api.dashboard.web import CurrentAccount, state_of
from compliance_api.errors import ApiError
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.sessions import DbSession


async def _own_classification(
    request: Request,
    environment: Environment,
    classification_id: uuid.UUID,
    account: CurrentAccount,
    session: DbSession,
) -> RecordWithHistory | None:
    """The account's classification `classification_id` in `environment`, with its history; None where it is another
    user's, the other environment's, expired or unknown (the page answers not found)."""
    retention = classify_service.Retention.of(state_of(request).settings)
    try:
        return await classify_service.get_classification(
            session, Acting.of(account, environment), classification_id, retention, utcnow()
        )
    except ApiError:
        return None


OwnClassification = Annotated[RecordWithHistory | None, Depends(_own_classification)]
"""A page's parameter: the signed-in user's classification its path names, or None (not found)."""
