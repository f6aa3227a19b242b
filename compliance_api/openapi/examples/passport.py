"""Passports and their share-tokens: the demo freelancer's sandbox passport."""

from __future__ import annotations

from typing import Any

FREELANCER_ID = "81246ce4-a8a1-47df-b4e1-97ead10be040"
VIEWER_ID = "ca07f968-cba4-44cf-82c6-07b96ca24adb"
SHARE_ID = "6f1c1a52-4c1e-4b8e-9d3e-2f7a4f0b9c11"
CHECKS = ("identity", "kvk_registration", "professional_liability_insurance", "vat_number")
NAMES = {
    "identity": "Identity",
    "kvk_registration": "KvK registration",
    "professional_liability_insurance": "Professional liability insurance",
    "vat_number": "VAT number",
}

OWN_PASSPORT: dict[str, Any] = {
    "compliance_score": 85,
    "compliance_level": "high",
    "sector": "ict",
    "verified": True,
    "last_updated": "2026-07-09T12:00:00Z",
    "freelancer_id": FREELANCER_ID,
    "livemode": False,
    "verifications": [
        {
            "check": check,
            "name": NAMES[check],
            "verified_on": "2026-07-09",
            "expires_on": "2027-07-09",
            "evidence_ref": f"demo:{check}",
            "valid": True,
        }
        for check in CHECKS
    ],
}
SHARE: dict[str, Any] = {
    "id": SHARE_ID,
    "last4": "R3C6",
    "created_at": "2026-07-09T12:00:00Z",
    "expires_at": "2026-08-08T12:00:00Z",
    "revoked_at": None,
    "status": "active",
    "livemode": False,
}
PAGE_END = {"has_more": False, "next_cursor": None}

EXAMPLES: dict[str, dict[str, Any]] = {
    "passport-get": {"responses": {"200": OWN_PASSPORT}},
    "passport-get-api": {"responses": {"200": OWN_PASSPORT}},
    "passport-share-create": {
        "request": {"ttl_days": 30},
        "responses": {"201": {**SHARE, "token": "pst_<shown once>"}},
    },
    "passport-share-list": {"responses": {"200": {"data": [SHARE], **PAGE_END}}},
    "passport-share-revoke": {
        "responses": {"200": {**SHARE, "revoked_at": "2026-07-10T09:30:00Z", "status": "revoked"}}
    },
    "passport-share-views": {
        "responses": {
            "200": {
                "data": [
                    {
                        "viewed_at": "2026-07-10T08:15:00Z",
                        "viewer_id": VIEWER_ID,
                        "viewer_email": "hr@example.com",
                        "livemode": False,
                    }
                ],
                **PAGE_END,
            }
        }
    },
    "passport-verify": {
        "responses": {
            "200": {
                "freelancer_id": FREELANCER_ID,
                "issued_at": "2026-07-10T08:15:00Z",
                "expires_at": "2026-08-08T12:00:00Z",
                "compliance_score": 85,
                "verifications": list(CHECKS),
                "livemode": False,
                "jws_signature": "eyJhbGciOiJFZERTQSIsImtpZCI6ImpTcC1QV21pUXBJcklEZEtmaF9qd3VzM2l1MEJwUVBuYzFnTGd5"
                "SVVrNm8ifQ.eyJjb21wbGlhbmNlX3Njb3JlIjo4NX0.hDlnnVDrR8l4IVovhb2mbz_tWkGCxUNQ3H39jGnrQHJr7xzkoMShvnqzBYmY",
            }
        }
    },
}
