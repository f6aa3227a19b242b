"""The same data in production and in the sandbox, one builder per table family, made through the services."""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from compliance_api.accounts.models import UserKind
from compliance_api.classify import service as classify_service
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import ZelfstandigenwetRequest
from compliance_api.dac7 import dpi
from compliance_api.dac7 import service as dac7_service
from compliance_api.dac7.activity_file import ActivityRow
from compliance_api.dac7.fixtures import DEMO_OPERATOR
from compliance_api.dac7.models import ActivityType
from compliance_api.dac7.operator import set_operator
from compliance_api.events import service as events_service
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.passport import service as passport_service
from compliance_api.passport.catalogue import packaged_catalogue
from compliance_api.passport.reader import EngineReader
from compliance_api.rates import service as rates_service
from compliance_api.wtta import register_import
from compliance_api.wtta.register_file import validate
from tests.classify.conftest import caller_for
from tests.dac7.conftest import TEST_BOX, complete_identity
from tests.factories import create_user

SECTOR, REGION = "ict", "NL-UT"
WINDOW_MONTHS = 12


async def classifications(
    audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession], age: dt.timedelta = dt.timedelta(0)
) -> None:
    """One verdict `age` old in each environment."""
    user = await create_user(sessionmaker)
    body = ZelfstandigenwetRequest.model_validate({"engagement": {}})
    for environment in Environment:
        await classify_service.classify_engagement(
            audit, caller_for(user, environment), body, packaged_rulesets(), utcnow() - age
        )


async def events(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    async with sessionmaker.begin() as session:
        for environment in Environment:
            await events_service.emit(
                session, environment=environment, type=EventName.WTTA_ADMISSION_UPDATED, payload={}
            )


async def wtta(sessionmaker: async_sessionmaker[AsyncSession], kvk: str = "12345678") -> None:
    row = validate((kvk, "Retention B.V.", "admitted", "NAU-1", "2027-01-01", ""), "line", 1)
    origin = register_import.ImportSource(location="register.csv", source="test register")
    for environment in Environment:
        async with sessionmaker.begin() as session:
            await register_import.import_rows(session, environment=environment, rows=[row], origin=origin)


async def rates(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    today = utcnow().date()
    rows = [rates_service.Observation(SECTOR, REGION, 5_000 + 100 * i, today - dt.timedelta(days=i)) for i in range(30)]
    for environment in Environment:
        async with sessionmaker.begin() as session:
            await rates_service.add_observations(
                session,
                environment=environment,
                observations=rows,
                content_sha256="ab" * 32,
                source="rates.csv",
                window_months=WINDOW_MONTHS,
            )


async def passports(
    sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine, audit: GroupCommit, pepper: bytes
) -> None:
    """A passport with a verification, a share and one view of it, in each environment."""
    freelancer = await create_user(sessionmaker, kind=UserKind.freelancer)
    viewer = await create_user(sessionmaker)
    now = utcnow()
    for environment in Environment:
        async with sessionmaker.begin() as session:
            await passport_service.record_verification(
                session,
                freelancer,
                environment,
                packaged_catalogue(),
                check="identity",
                verified_on=now.date(),
                expires_on=None,
                evidence_ref="test:identity",
                now=now,
            )
            share = await passport_service.create_share_for(
                session, freelancer, environment, ttl_days=365, pepper=pepper, now=now
            )
        viewer_caller = caller_for(viewer, environment)
        reader = EngineReader(engine)
        await passport_service.verify_share(reader, audit, viewer_caller, share.token, pepper=pepper, now=now)


async def dac7(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    seller = await create_user(sessionmaker, kind=UserKind.freelancer)
    grantee = await create_user(sessionmaker)
    now = utcnow()
    for environment in Environment:
        row = ActivityRow(
            "1", f"act-{environment}", seller.id, ActivityType.personal_services, now.date(), 100_00, 0, 0
        )
        async with sessionmaker.begin() as session:
            await dac7_service.set_identity(session, seller, environment, complete_identity(), box=TEST_BOX, now=now)
            await set_operator(session, environment, DEMO_OPERATOR, now)
            await dac7_service.import_activities(session, environment, [row], now=now)
            await dac7_service.grant(session, seller, grantee, environment, now)
            with tempfile.TemporaryDirectory() as folder:
                out = Path(folder) / "dac7.xml"
                await dpi.export_year(session, environment, now.year, box=TEST_BOX, out=out, now=now)
