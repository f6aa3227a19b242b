"""The event log: a sandbox token created, as a webhook delivery of it carries it."""

from __future__ import annotations

from typing import Any

from compliance_api.openapi.examples.passport import PAGE_END

EVENT_ID = "c40b583c-19ad-4f86-8b9f-8d6d4be345bf"
EVENT: dict[str, Any] = {
    "id": EVENT_ID,
    "type": "api_token.created",
    "created_at": "2026-07-09T12:00:00+00:00",
    "environment": "test",
    "livemode": False,
    "data": {
        "user_id": "ca07f968-cba4-44cf-82c6-07b96ca24adb",
        "token_id": "58326ab7-1bc1-47cb-a03e-7a0178080adc",
        "name": "demo",
        "last4": "bX1g",
        "created_at": "2026-07-09T12:00:00+00:00",
    },
}

EXAMPLES: dict[str, dict[str, Any]] = {
    "event-list": {"responses": {"200": {"data": [EVENT], **PAGE_END}}},
    "event-get": {"parameters": {"event_id": EVENT_ID}, "responses": {"200": EVENT}},
}
