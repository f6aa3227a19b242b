"""Sandbox fixtures: one documented KvK number per admission status, like a payment provider's test cards.

`demo --env live` stores the same numbers in production, named and sourced as synthetic demo data."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.kit.environment import Environment
from compliance_api.wtta import register_import
from compliance_api.wtta.models import AdmissionStatus
from compliance_api.wtta.register_file import validate

SANDBOX_SOURCE = "sandbox test data (fictitious, not the WTTA register)"
PRODUCTION_DEMO_SOURCE = "synthetic demo data (fictitious, not the WTTA register)"
DEMO_LOCATION = "compliance-api demo"

# (KvK number, admission number, admitted_at, expires_at) per status; the numbers are reserved for the sandbox.
SANDBOX_ADMISSIONS: dict[AdmissionStatus, tuple[str, str, str, str]] = {
    AdmissionStatus.unknown: ("99000001", "", "", ""),
    AdmissionStatus.applied: ("99000002", "", "", ""),
    AdmissionStatus.admitted: ("99000003", "NAU-TEST-0003", "2027-01-01", ""),
    AdmissionStatus.conditionally_admitted: ("99000004", "NAU-TEST-0004", "2027-01-01", "2028-01-01"),
    AdmissionStatus.revoked: ("99000005", "NAU-TEST-0005", "2027-01-01", ""),
    AdmissionStatus.suspended: ("99000006", "NAU-TEST-0006", "2027-01-01", ""),
    AdmissionStatus.expired: ("99000007", "NAU-TEST-0007", "2027-01-01", "2027-07-01"),
    AdmissionStatus.not_required: ("99000008", "", "", ""),
}

SANDBOX_TABLE = "\n".join(
    ["| KvK number | admission_status |", "|---|---|"]
    + [f"| `{kvk}` | `{status}` |" for status, (kvk, *_) in SANDBOX_ADMISSIONS.items()]
)


async def create_sandbox_admissions(
    session: AsyncSession, environment: Environment = Environment.test
) -> dict[str, str]:
    """(Re)set the fixtures in the environment's cache; returns status → KvK number."""
    sandbox = environment is Environment.test
    rows = []
    for line, (status, (kvk, number, admitted_at, expires_at)) in enumerate(SANDBOX_ADMISSIONS.items(), start=1):
        name = f"{'Sandbox' if sandbox else 'Demo'} {status.replace('_', ' ').title()} B.V."
        rows.append(validate((kvk, name, status.value, number, admitted_at, expires_at), "fixture", line))
    origin = register_import.ImportSource(
        location=DEMO_LOCATION, source=SANDBOX_SOURCE if sandbox else PRODUCTION_DEMO_SOURCE
    )
    await register_import.import_rows(session, environment=environment, rows=rows, origin=origin)
    return {status.value: kvk for status, (kvk, *_) in SANDBOX_ADMISSIONS.items()}
