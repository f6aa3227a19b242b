"""The request log's rows as the API's schemas."""

from __future__ import annotations

from compliance_api.requestlog import service
from compliance_api.requestlog.schemas import LoggedRequest, RequestToken


def logged_request(logged: service.LogRow) -> LoggedRequest:
    row = logged.row
    return LoggedRequest(
        id=row.id,
        request_id=row.request_id,
        created_at=row.created_at,
        environment=row.environment.value,
        livemode=row.livemode,
        method=row.method,
        path=row.path,
        status=row.status,
        latency_ms=round(row.latency_us / 1000, 3),
        token=RequestToken(id=row.token_id, name=logged.token_name, last4=row.token_last4),
        rate_limit_remaining=row.rate_limit_remaining,
        problem=logged.problem,
    )
