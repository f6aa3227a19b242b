"""Sandbox DAC7 fixtures for `compliance-api demo`: an authorised and an unauthorised seller.

The demo freelancer is a seller (NL, BSN 111222333) with three activities this year and a grant to the demo
business; a second freelancer is a seller (DE) the demo business holds no grant for. Re-running the demo leaves
them as they are (the activities have fixed ids, granting twice keeps the active grant).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.dac7 import service
from compliance_api.dac7.activity_file import ActivityRow
from compliance_api.dac7.models import ActivityType
from compliance_api.kit.clock import utcnow
from compliance_api.passport.fixtures import DEMO_FREELANCER_EMAIL, SANDBOX

UNAUTHORISED_SELLER_EMAIL = "demo-seller-unauthorised@example.com"
DEMO_ACTIVITY_IDS = ("demo-dac7-1", "demo-dac7-2", "demo-dac7-3", "demo-dac7-4")


def _activity(external_id: str, user: User, day: dt.date, consideration: int, fees: int) -> ActivityRow:
    return ActivityRow(
        line="demo",
        external_id=external_id,
        freelancer_id=user.id,
        activity_type=ActivityType.personal_services,
        activity_date=day,
        consideration_cents=consideration,
        fees_cents=fees,
        taxes_cents=0,
    )


async def create_dac7_fixtures(session: AsyncSession, *, business: User) -> dict[str, Any]:
    now = utcnow()
    today = now.date()
    authorised = await accounts_service.get_or_create(
        session, email=DEMO_FREELANCER_EMAIL, kind=UserKind.freelancer, plan=Plan.free
    )
    unauthorised = await accounts_service.get_or_create(
        session, email=UNAUTHORISED_SELLER_EMAIL, kind=UserKind.freelancer, plan=Plan.free
    )
    await service.record_seller(session, authorised, SANDBOX, tin="111222333", member_state="NL", now=now)
    await service.record_seller(session, unauthorised, SANDBOX, tin="36574261809", member_state="DE", now=now)
    days = [min(dt.date(today.year, month, 15), today) for month in (1, 2, 3)]
    rows = [
        _activity(DEMO_ACTIVITY_IDS[0], authorised, days[0], 1_200_00, 120_00),
        _activity(DEMO_ACTIVITY_IDS[1], authorised, days[1], 800_00, 80_00),
        _activity(DEMO_ACTIVITY_IDS[2], authorised, days[2], 450_50, 45_05),
        _activity(DEMO_ACTIVITY_IDS[3], unauthorised, days[0], 300_00, 30_00),
    ]
    await service.import_activities(session, SANDBOX, rows, now=now)
    await service.grant(session, authorised, business, SANDBOX, now)
    return {"dac7": {"authorised_seller": str(authorised.id), "unauthorised_seller": str(unauthorised.id)}}
