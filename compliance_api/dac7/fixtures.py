"""Sandbox DAC7 fixtures for `compliance-api demo`: a complete platform operator, an authorised and an unauthorised
seller, each with the complete identity a DAC7 report needs.

The demo freelancer is a seller (NL, BSN 111222333) with three activities this year and a grant to the demo
business; a second freelancer is a seller (DE) the demo business holds no grant for. The identities are invented.
Re-running the demo leaves them as they are (the activities have fixed ids, granting twice keeps the active grant).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.dac7 import service
from compliance_api.dac7.activity_file import ActivityRow
from compliance_api.dac7.identity import Dac7Address, Dac7BirthPlace, Dac7FinancialAccount, Dac7Tin, SellerIdentity
from compliance_api.dac7.models import ActivityType
from compliance_api.dac7.nexus import Nexus
from compliance_api.dac7.operator import OperatorIdentity, set_operator
from compliance_api.dac7.sealing import IdentityBox
from compliance_api.kit.clock import utcnow
from compliance_api.passport.fixtures import DEMO_FREELANCER_EMAIL, SANDBOX

UNAUTHORISED_SELLER_EMAIL = "demo-seller-unauthorised@example.com"
DEMO_ACTIVITY_IDS = ("demo-dac7-1", "demo-dac7-2", "demo-dac7-3", "demo-dac7-4")


DEMO_OPERATOR = OperatorIdentity(
    name="Demo Platform B.V.",
    tin="862637223",
    tin_issued_by="NL",
    country="NL",
    nexus=Nexus.RPONEX1,
    vat="NL862637223B01",
    address=Dac7Address(country="NL", street="Damrak", building="1", post_code="1012 LG", city="Amsterdam"),
)
AUTHORISED_IDENTITY = SellerIdentity(
    first_name="Jan",
    last_name="de Vries",
    date_of_birth=dt.date(1990, 4, 1),
    place_of_birth=Dac7BirthPlace(city="Utrecht", country="NL"),
    address=Dac7Address(country="NL", street="Keizersgracht", building="100", post_code="1015 AA", city="Amsterdam"),
    tins=[Dac7Tin(tin="111222333", issued_by="NL")],
    financial_account=Dac7FinancialAccount(iban="NL91ABNA0417164300", holder="J. de Vries"),
)
UNAUTHORISED_IDENTITY = SellerIdentity(
    first_name="Erika",
    last_name="Mustermann",
    date_of_birth=dt.date(1985, 8, 12),
    address=Dac7Address(country="DE", street="Heidestraße", building="17", post_code="51147", city="Köln"),
    tins=[Dac7Tin(tin="36574261809", issued_by="DE")],
)


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


async def create_dac7_fixtures(session: AsyncSession, *, business: User, box: IdentityBox) -> dict[str, Any]:
    now = utcnow()
    today = now.date()
    authorised = await accounts_service.get_or_create(
        session, email=DEMO_FREELANCER_EMAIL, kind=UserKind.freelancer, plan=Plan.free
    )
    unauthorised = await accounts_service.get_or_create(
        session, email=UNAUTHORISED_SELLER_EMAIL, kind=UserKind.freelancer, plan=Plan.free
    )
    await set_operator(session, SANDBOX, DEMO_OPERATOR, now)
    await service.set_identity(session, authorised, SANDBOX, AUTHORISED_IDENTITY, box=box, now=now)
    await service.set_identity(session, unauthorised, SANDBOX, UNAUTHORISED_IDENTITY, box=box, now=now)
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
