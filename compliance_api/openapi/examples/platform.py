"""Health, the WTTA register and rate benchmarks: the sandbox fixtures' answers."""

from __future__ import annotations

from typing import Any

PROVINCES = ("DR", "FL", "FR", "GE", "GR", "LI", "NB", "NH", "OV", "UT", "ZE", "ZH")
WTTA_SOURCE = "sandbox test data (fictitious, not the WTTA register)"

EXAMPLES: dict[str, dict[str, Any]] = {
    "health-get": {
        "responses": {
            "200": {
                "status": "ok",
                "region": "eu-west",
                "version": "0.1.0",
                "wtta": {"imported_at": "2026-07-09T04:00:00Z", "age_seconds": 28800},
                "livemode": False,
            }
        }
    },
    "wtta-lookup": {
        "parameters": {"kvk": "99000003"},
        "responses": {
            "200": {
                "kvk_number": "99000003",
                "legal_name": "Sandbox Admitted B.V.",
                "admission_status": "admitted",
                "admission_number": "NAU-TEST-0003",
                "admitted_at": "2027-01-01T00:00:00Z",
                "expires_at": None,
                "source": WTTA_SOURCE,
                "source_url": None,
                "last_verified_at": "2026-07-09T04:00:00Z",
                "missing_from_source_at": None,
                "livemode": False,
            }
        },
    },
    "wtta-history": {
        "parameters": {"kvk": "99000005"},
        "responses": {
            "200": {
                "kvk_number": "99000005",
                "changes": [
                    {
                        "from_status": None,
                        "to_status": "revoked",
                        "changed_at": "2026-07-09T04:00:00Z",
                        "source": WTTA_SOURCE,
                    }
                ],
                "livemode": False,
            }
        },
    },
    "rates-benchmark-get": {
        "responses": {
            "200": {
                "sector": "ict",
                "region": "NL",
                "p25_eur": 72.3,
                "p50_eur": 95.12,
                "p75_eur": 121.46,
                "sample_size": 250,
                "as_of": "2026-07-07",
                "currency": "EUR",
                "vat": "excluded",
                "window_months": 24,
                "synthetic": True,
                "source": "Percentiles (linear interpolation) of 250 synthetic observations generated for the "
                "sandbox/demo dated 2024-07-08 to 2026-07-07, all regions.",
                "livemode": False,
            }
        }
    },
    "rates-sectors-get": {
        "responses": {
            "200": {
                "sectors": [
                    {"sector": "cooking", "label": "Cooks", "regions": ["NL", "NL-GE", "NL-NB"]},
                    {"sector": "ict", "label": "ICT", "regions": ["NL", "NL-NH", "NL-UT"]},
                ],
                "regions": ["NL", *(f"NL-{p}" for p in PROVINCES)],
                "min_sample": 10,
                "livemode": False,
            }
        }
    },
}
