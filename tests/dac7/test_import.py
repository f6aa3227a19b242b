"""Activity imports: checked row by row, all or nothing, idempotent, and one event per seller whose figures change."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import UserKind
from compliance_api.dac7 import activity_file, service
from compliance_api.dac7.figures import year_figures
from compliance_api.dac7.models import ActivityType
from compliance_api.events import service as events
from compliance_api.kit.environment import Environment
from tests.dac7.conftest import csv_file, import_rows, make_seller, row
from tests.factories import create_user
from tests.passport.conftest import Account

TODAY = dt.date(2026, 11, 23)
DAY = dt.date(2026, 5, 4)


async def _snapshot_events(
    sessionmaker: async_sessionmaker[AsyncSession], environment: Environment
) -> list[dict[str, Any]]:
    async with sessionmaker() as session:
        found = await events.pending(session, environment=environment, type=service.SNAPSHOT_EVENT)
        return [e.payload for e in found]


async def _totals(sessionmaker: async_sessionmaker[AsyncSession], seller: Account, year: int) -> tuple[int, int]:
    async with sessionmaker() as session:
        chosen = await service.seller_of(session, seller.user.id, Environment.live)
        assert chosen is not None
        total = (await year_figures(session, [chosen.id], year))[chosen.id].total()
        return total.count, total.consideration_cents


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ("x 1,{id},2026-05-04,10,0,0,", "activity_id", "letters, digits"),
        ("a-1,not-a-uuid,2026-05-04,10,0,0,", "freelancer_id", "not a UUID"),
        ("a-1,{id},2026-13-04,10,0,0,", "activity_date", "not a valid date"),
        ("a-1,{id},2027-01-01,10,0,0,", "activity_date", "in the future"),
        ("a-1,{id},04-05-2026,10,0,0,", "activity_date", "YYYY-MM-DD"),
        ("a-1,{id},2026-05-04,10.001,0,0,", "consideration_eur", "two decimals"),
        ("a-1,{id},2026-05-04,-1,0,0,", "consideration_eur", "at least 0"),
        ("a-1,{id},2026-05-04,ten,0,0,", "consideration_eur", "not a number"),
        ("a-1,{id},2026-05-04,10,8,3,", "fees_eur", "exceed"),
        ("a-1,{id},2026-05-04,10,0,,", "taxes_eur", "missing"),
        ("a-1,{id},2026-05-04,10,0,0,rental", "activity_type", "not one of"),
    ],
)
def test_a_bad_row_names_its_line_and_field(line: str, field: str, message: str) -> None:
    good = "ok-1,6f1c1a52-4c1e-4b8e-9d3e-2f7a4f0b9c11,2026-05-04,10,0,0,"
    content = csv_file(good, line.format(id="6f1c1a52-4c1e-4b8e-9d3e-2f7a4f0b9c11"))
    with pytest.raises(activity_file.ActivityFileError, match=message) as caught:
        activity_file.parse(content, json_format=False, today=TODAY)
    assert (caught.value.line, caught.value.field) == ("line 3", field)


def test_duplicate_ids_a_bad_header_and_json_records_are_named() -> None:
    seller = "6f1c1a52-4c1e-4b8e-9d3e-2f7a4f0b9c11"
    with pytest.raises(activity_file.ActivityFileError, match="also on line 2") as caught:
        activity_file.parse(
            csv_file(f"a,{seller},2026-05-04,1,0,0,", f"a,{seller},2026-05-05,1,0,0,"), json_format=False, today=TODAY
        )
    assert caught.value.field == "activity_id"
    with pytest.raises(activity_file.ActivityFileError, match="the header must be"):
        activity_file.parse(b"freelancer_id,activity_date\n", json_format=False, today=TODAY)
    records = [
        {
            "activity_id": "j-1",
            "freelancer_id": seller,
            "activity_date": "2026-05-04",
            "consideration_eur": 12.5,
            "fees_eur": 0,
            "taxes_eur": "1.25",
        },
        {
            "activity_id": "j-2",
            "freelancer_id": seller,
            "activity_date": "2026-05-04",
            "consideration_eur": True,
            "fees_eur": 0,
            "taxes_eur": 0,
        },
    ]
    with pytest.raises(activity_file.ActivityFileError, match="record 2, field consideration_eur"):
        activity_file.parse(json.dumps(records).encode(), json_format=True, today=TODAY)
    parsed = activity_file.parse(json.dumps(records[:1]).encode(), json_format=True, today=TODAY)
    assert (parsed[0].consideration_cents, parsed[0].taxes_cents) == (1250, 125), "exact: Decimal, never float"
    assert parsed[0].activity_type is ActivityType.personal_services


async def test_an_unknown_seller_aborts_the_whole_import(
    seller: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    stranger = await create_user(sessionmaker, kind=UserKind.freelancer)
    with pytest.raises(activity_file.ActivityFileError, match="not a DAC7 seller in production") as caught:
        await import_rows(sessionmaker, [row("a-1", seller.user.id, DAY), row("a-2", stranger.id, DAY)])
    assert (caught.value.line, caught.value.field) == ("line 3", "freelancer_id")
    assert await _totals(sessionmaker, seller, 2026) == (0, 0), "nothing of the file was written"
    assert await _snapshot_events(sessionmaker, Environment.live) == []


async def test_reimporting_changes_nothing_and_a_correction_replaces_the_activity(
    seller: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    rows = [
        row("a-1", seller.user.id, DAY, "100.00", "10.00", "5.00"),
        row("a-2", seller.user.id, DAY, "50.00", "0", "0"),
    ]
    first = await import_rows(sessionmaker, rows)
    assert (first.created, first.updated, first.unchanged, first.events) == (2, 0, 0, 1)
    payloads = await _snapshot_events(sessionmaker, Environment.live)
    assert payloads == [
        {
            "freelancer_id": str(seller.user.id),
            "year": 2026,
            "totals": {
                "currency": "EUR",
                "total_consideration_eur": "135.00",
                "fees_eur": "10.00",
                "taxes_eur": "5.00",
                "number_of_activities": 2,
                "reportable": True,
            },
        }
    ]
    again = await import_rows(sessionmaker, rows)
    assert (again.created, again.updated, again.unchanged, again.events) == (0, 0, 2, 0)
    assert len(await _snapshot_events(sessionmaker, Environment.live)) == 1, "no event for an unchanged file"
    corrected = await import_rows(sessionmaker, [row("a-2", seller.user.id, DAY, "70.00", "0", "0")])
    assert (corrected.updated, corrected.events) == (1, 1)
    assert await _totals(sessionmaker, seller, 2026) == (2, 15500)
    assert (await _snapshot_events(sessionmaker, Environment.live))[-1]["totals"]["total_consideration_eur"] == "155.00"


async def test_moving_an_activity_to_another_year_updates_both_years(
    seller: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await import_rows(sessionmaker, [row("a-1", seller.user.id, dt.date(2025, 12, 31))])
    moved = await import_rows(sessionmaker, [row("a-1", seller.user.id, dt.date(2026, 1, 1))])
    assert moved.events == 2
    assert await _totals(sessionmaker, seller, 2025) == (0, 0)
    assert await _totals(sessionmaker, seller, 2026) == (1, 9000)
    years = [p["year"] for p in await _snapshot_events(sessionmaker, Environment.live)]
    assert sorted(years[-2:]) == [2025, 2026]


async def test_imports_are_environment_scoped(seller: Account, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    with pytest.raises(activity_file.ActivityFileError, match="not a DAC7 seller in sandbox"):
        await import_rows(sessionmaker, [row("a-1", seller.user.id, DAY)], Environment.test)
    await make_seller(sessionmaker, seller.user, Environment.test)
    await import_rows(sessionmaker, [row("a-1", seller.user.id, DAY, "999.00")], Environment.test)
    await import_rows(sessionmaker, [row("a-1", seller.user.id, DAY, "100.00")])
    assert await _totals(sessionmaker, seller, 2026) == (1, 9000), "the sandbox row with the same id is another row"
    assert len(await _snapshot_events(sessionmaker, Environment.test)) == 1
    assert len(await _snapshot_events(sessionmaker, Environment.live)) == 1


async def test_goods_only_sellers_below_the_de_minimis_are_not_reportable(
    seller: Account, other_freelancer: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await make_seller(sessionmaker, other_freelancer.user)
    goods = [row(f"g-{i}", seller.user.id, DAY, "100.00", "0", "0", "sale_of_goods") for i in range(20)]
    await import_rows(sessionmaker, [*goods, row("s-1", other_freelancer.user.id, DAY, "1.00", "0", "0")])
    async with sessionmaker() as session:
        small = await service.seller_of(session, seller.user.id, Environment.live)
        tiny_service = await service.seller_of(session, other_freelancer.user.id, Environment.live)
        assert small is not None
        assert tiny_service is not None
        figures = await year_figures(session, [small.id, tiny_service.id], 2026)
    assert figures[small.id].total().consideration_cents == 2_000_00
    assert not figures[small.id].reportable, "20 sales of goods, EUR 2,000: excluded"
    assert figures[tiny_service.id].reportable, "personal services: reportable whatever the amount"
    await import_rows(sessionmaker, [row("g-20", seller.user.id, DAY, "0.01", "0", "0", "sale_of_goods")])
    async with sessionmaker() as session:
        assert (await year_figures(session, [small.id], 2026))[small.id].reportable, "above EUR 2,000"
