"""Webhook endpoints and their deliveries: a sandbox endpoint subscribed to new classifications."""

from __future__ import annotations

from typing import Any

from compliance_api.openapi.examples.passport import PAGE_END

ENDPOINT_ID = "0b6f4f1e-2a43-4c55-9a0e-2f4f1c3d5e6a"
DELIVERY_ID = "5d2c3b4a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"
EVENT_ID = "d35d7cda-bef2-42c3-9d5b-0282f44c8130"
URL = "https://example.com/hooks/compliance"
# Placeholders, not secret-shaped: a value that looks like a real secret is flagged by secret scanners and copied.
SECRET = "whsec_<32 random bytes, base64, shown once>"  # noqa: S105

ENDPOINT: dict[str, Any] = {
    "id": ENDPOINT_ID,
    "url": URL,
    "description": "payroll",
    "enabled_events": ["classification.created", "classification.verdict_changed"],
    "enabled": True,
    "status": "active",
    "status_reason": None,
    "livemode": False,
    "created_at": "2026-07-09T12:00:00Z",
    "updated_at": "2026-07-09T12:00:00Z",
    "previous_secret_expires_at": None,
}
DELIVERY: dict[str, Any] = {
    "id": DELIVERY_ID,
    "endpoint_id": ENDPOINT_ID,
    "event_id": EVENT_ID,
    "event_type": "webhook.test",
    "status": "pending",
    "attempts": 0,
    "created_at": "2026-07-09T12:05:00Z",
    "last_attempt_at": None,
    "last_status_code": None,
    "last_latency_ms": None,
    "last_error": None,
    "last_response_body": None,
    "next_attempt_at": "2026-07-09T12:05:00Z",
    "delivered_at": None,
    "livemode": False,
    "attempt_log": [],
}
FAILED_DELIVERY: dict[str, Any] = {
    **DELIVERY,
    "status": "failed",
    "attempts": 1,
    "last_attempt_at": "2026-07-09T12:05:01Z",
    "last_status_code": 500,
    "last_latency_ms": 212,
    "last_error": "HTTP 500",
    "next_attempt_at": None,
    "attempt_log": [
        {
            "number": 1,
            "attempted_at": "2026-07-09T12:05:01Z",
            "status_code": 500,
            "latency_ms": 212,
            "error": "HTTP 500",
        }
    ],
}

EXAMPLES: dict[str, dict[str, Any]] = {
    "webhook-endpoint-create": {
        "request": {
            "url": URL,
            "enabled_events": ["classification.created", "classification.verdict_changed"],
            "description": "payroll",
        },
        "responses": {"201": {**ENDPOINT, "secret": SECRET}},
    },
    "webhook-endpoint-list": {"responses": {"200": {"data": [ENDPOINT], **PAGE_END}}},
    "webhook-endpoint-get": {"responses": {"200": ENDPOINT}},
    "webhook-endpoint-update": {
        "request": {"description": "payroll (Amsterdam office)", "enabled": True},
        "responses": {
            "200": {**ENDPOINT, "description": "payroll (Amsterdam office)", "updated_at": "2026-07-10T09:30:00Z"}
        },
    },
    "webhook-endpoint-rotate-secret": {
        "responses": {
            "200": {
                **ENDPOINT,
                "updated_at": "2026-07-10T09:30:00Z",
                "previous_secret_expires_at": "2026-07-11T09:30:00Z",
                "secret": "whsec_<the new secret: 32 random bytes, base64, shown once>",
            }
        }
    },
    "webhook-endpoint-replay": {
        "request": {"since": "2026-07-08T00:00:00Z", "mode": "undelivered"},
        "responses": {
            "202": {
                "replayed": 3,
                "already_pending": 1,
                "since": "2026-07-08T00:00:00Z",
                "has_more": False,
                "next_cursor": None,
                "livemode": False,
            }
        },
    },
    "webhook-endpoint-test": {"responses": {"202": DELIVERY}},
    "webhook-delivery-list": {"responses": {"200": {"data": [FAILED_DELIVERY], **PAGE_END}}},
    "webhook-delivery-retry": {
        "responses": {"202": {**FAILED_DELIVERY, "status": "pending", "next_attempt_at": "2026-07-09T12:10:00Z"}}
    },
}
