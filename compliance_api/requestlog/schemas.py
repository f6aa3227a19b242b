"""The request log's answers: one logged request each, as `GET /v1/requests` lists them."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import ConfigDict, Field

from compliance_api.kit.pagination import Page
from compliance_api.kit.schemas import Livemode, ResponseSchema

EXAMPLE: dict[str, Any] = {
    "id": "3f1c2b7e-8d4a-4e55-9c1a-2b3c4d5e6f70",
    "request_id": "req_5f0c3a9e1b2d4c6f8a7e9b10",
    "created_at": "2026-11-25T02:00:04.512000Z",
    "environment": "live",
    "livemode": True,
    "method": "GET",
    "path": "/v1/wtta/lookup",
    "status": 404,
    "latency_ms": 3.2,
    "token": {"id": "0b6f4f1e-2a43-4c55-9a0e-2f4f1c3d5e6a", "name": "payroll integration", "last4": "x9Qa"},
    "rate_limit_remaining": 118,
    "problem": {
        "type": "https://api.example.com/errors/not_in_cache",
        "title": "Not in cache",
        "status": 404,
        "detail": "The KvK number is not in the register cache.",
        "code": "not_in_cache",
        "request_id": "req_5f0c3a9e1b2d4c6f8a7e9b10",
    },
}


LIST_EXAMPLE: dict[str, Any] = {
    "data": [EXAMPLE],
    "has_more": True,
    "next_cursor": "eyJ0IjoiMjAyNi0xMS0yNVQwMjowMDowNC41MTIwMDArMDA6MDAifQ",
}


class RequestToken(ResponseSchema):
    """The token a request was made with: never the token itself."""

    id: uuid.UUID
    name: str | None = Field(description="The token's name now; null if the token no longer exists.")
    last4: str = Field(description="The token's last four characters.")


class LoggedRequest(ResponseSchema):
    """One API request you made, as the request log keeps it for 30 days: no bodies, no query strings, no tokens."""

    model_config = ConfigDict(json_schema_extra={"examples": [EXAMPLE]})

    id: uuid.UUID = Field(description="The log entry's id.")
    request_id: str = Field(description="The request's `X-Request-Id` (yours if you sent one, else ours).")
    created_at: dt.datetime = Field(description="When the request arrived.")
    environment: Literal["live", "test"] = Field(description="`live` (production) or `test` (sandbox).")
    livemode: Livemode
    method: str
    path: str = Field(
        description="The operation's path template, e.g. `/v1/passport/{token}/verify`: parameters and the query "
        "string are never stored."
    )
    status: int = Field(description="The HTTP status of the answer.")
    latency_ms: float = Field(description="Time spent in the service, in milliseconds.")
    token: RequestToken
    rate_limit_remaining: int | None = Field(description="`X-RateLimit-Remaining` of the answer.")
    problem: dict[str, Any] | None = Field(
        description="The problem+json body of a 4xx or 5xx answer; null for successful ones (never stored)."
    )


class RequestList(Page[LoggedRequest]):
    """A page of your requests, newest first."""
