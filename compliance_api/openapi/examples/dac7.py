"""DAC7 seller snapshots, identities and grants: the demo freelancer (an NL seller) and its grant to the demo
business."""

from __future__ import annotations

from typing import Any

from compliance_api.openapi.examples.passport import FREELANCER_ID, PAGE_END, VIEWER_ID

GRANT_ID = "f845613b-8faa-401e-ae30-2714fd324192"
GRANT: dict[str, Any] = {
    "id": GRANT_ID,
    "grantee_id": VIEWER_ID,
    "created_at": "2026-07-09T12:00:00Z",
    "revoked_at": None,
    "status": "active",
}

IDENTITY_IN: dict[str, Any] = {
    "kind": "individual",
    "first_name": "Jan",
    "last_name": "de Vries",
    "date_of_birth": "1990-04-01",
    "place_of_birth": {"city": "Utrecht", "country": "NL"},
    "address": {
        "country": "NL",
        "street": "Keizersgracht",
        "building": "100",
        "post_code": "1015 AA",
        "city": "Amsterdam",
    },
    "tins": [{"tin": "111222333", "issued_by": "NL"}],
    "financial_account": {"iban": "NL91ABNA0417164300", "holder": "J. de Vries"},
}
IDENTITY_OUT: dict[str, Any] = {
    **IDENTITY_IN,
    "legal_name": None,
    "tins": [{"tin": "111222333", "issued_by": "NL", "rule": "stdnum.nl.bsn"}],
    "tin_not_issued": False,
    "vat": None,
    "business_registration_number": None,
    "permanent_establishments": [],
    "freelancer_id": FREELANCER_ID,
    "residence": "NL",
    "complete": True,
    "lacking": [],
    "updated_at": "2026-07-09T12:00:00Z",
    "livemode": False,
}

EXAMPLES: dict[str, dict[str, Any]] = {
    "dac7-identity-get": {"parameters": {"freelancer_id": FREELANCER_ID}, "responses": {"200": IDENTITY_OUT}},
    "dac7-identity-put": {
        "parameters": {"freelancer_id": FREELANCER_ID},
        "request": IDENTITY_IN,
        "responses": {"200": IDENTITY_OUT},
    },
    "dac7-seller-get": {
        "parameters": {"freelancer_id": FREELANCER_ID},
        "responses": {
            "200": {
                "freelancer_id": FREELANCER_ID,
                "reporting_year": 2026,
                "tin": "111222333",
                "member_state": "NL",
                "total_consideration_eur": 2205.45,
                "number_of_activities": 3,
                "reported_at": None,
                "fees_eur": 245.05,
                "taxes_eur": 0.0,
                "currency": "EUR",
                "reportable": True,
                "livemode": False,
            }
        },
    },
    "dac7-grant-create": {"request": {"grantee_id": VIEWER_ID}, "responses": {"201": GRANT}},
    "dac7-grant-list": {"responses": {"200": {"data": [GRANT], **PAGE_END}}},
    "dac7-grant-revoke": {
        "parameters": {"grant_id": GRANT_ID},
        "responses": {"200": {**GRANT, "revoked_at": "2026-07-10T09:30:00Z", "status": "revoked"}},
    },
}
