"""The DPI XML export: structure of OECD DPI v1.0, per-quarter figures adding up to the year, `reported_at`."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.dac7 import dpi, service, views
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.dac7.conftest import import_rows, make_seller, row
from tests.passport.conftest import Account

NS = {"dpi": dpi.DPI_NS, "stf": dpi.STF_NS}
OPERATOR = dpi.Operator(name="Platform B.V.", tin="123456789", country="NL")
YEAR = 2025


async def _export(
    sessionmaker: async_sessionmaker[AsyncSession], environment: Environment = Environment.live
) -> tuple[ET.Element, dpi.Export]:
    async with sessionmaker.begin() as session:
        made = await dpi.export_year(session, environment, YEAR, OPERATOR, now=utcnow())
    return ET.fromstring(made.xml), made


def _quarters(node: ET.Element, group: str, prefix: str) -> list[int]:
    values = [node.find(f"dpi:{group}/dpi:{prefix}{q}", NS) for q in (1, 2, 3, 4)]
    assert all(v is not None and v.text is not None for v in values)
    return [int(v.text) for v in values if v is not None and v.text is not None]


async def test_the_export_has_the_dpi_structure_and_quarterly_totals_that_add_up(
    seller: Account, other_freelancer: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await make_seller(sessionmaker, other_freelancer.user, tin="36574261809", state="DE")
    mine = seller.user.id
    await import_rows(
        sessionmaker,
        [
            row("q1-a", mine, dt.date(YEAR, 1, 10), "1000.00", "100.00", "0"),
            row("q1-b", mine, dt.date(YEAR, 3, 31), "500.00", "50.00", "20.00"),
            row("q3-a", mine, dt.date(YEAR, 8, 1), "2000.00", "200.00", "0"),
            row("q4-a", mine, dt.date(YEAR, 12, 31), "300.00", "0", "0"),
            row("goods", other_freelancer.user.id, dt.date(YEAR, 2, 1), "10.00", "0", "0", "sale_of_goods"),
        ],
    )
    root, made = await _export(sessionmaker)
    assert root.tag == f"{{{dpi.DPI_NS}}}DPI_OECD"
    assert root.get("version") == "1.0"
    spec = root.find("dpi:MessageSpec", NS)
    assert spec is not None
    assert [child.tag.split("}")[1] for child in spec] == [
        "SendingEntityIN",
        "TransmittingCountry",
        "ReceivingCountry",
        "MessageType",
        "MessageRefId",
        "MessageTypeIndic",
        "ReportingPeriod",
        "Timestamp",
    ]
    assert spec.findtext("dpi:MessageType", namespaces=NS) == "DPI"
    assert spec.findtext("dpi:MessageTypeIndic", namespaces=NS) == "DPI401"
    assert spec.findtext("dpi:ReportingPeriod", namespaces=NS) == f"{YEAR}-12-31"
    assert spec.findtext("dpi:MessageRefId", namespaces=NS) == made.message_ref_id
    assert root.findtext("dpi:DPIBody/dpi:PlatformOperator/dpi:Name", namespaces=NS) == "Platform B.V."
    sellers = root.findall("dpi:DPIBody/dpi:ReportableSeller", NS)
    assert len(sellers) == made.sellers == 1, "the goods-only seller below the de minimis is excluded"
    reported = sellers[0]
    identity = reported.find("dpi:Identity/dpi:IndividualSeller/dpi:Standard/dpi:IndSellerID", NS)
    assert identity is not None
    assert identity.findtext("dpi:ResCountryCode", namespaces=NS) == "NL"
    tin = identity.find("dpi:TIN", NS)
    assert tin is not None
    assert (tin.text, tin.get("issuedBy")) == ("111222333", "NL")
    assert reported.findtext("dpi:DocSpec/stf:DocTypeIndic", namespaces=NS) == "OECD1"
    services = reported.find("dpi:RelevantActivities/dpi:PersonalServices", NS)
    assert services is not None
    assert reported.find("dpi:RelevantActivities/dpi:SaleOfGoods", NS) is None
    assert [c.tag.split("}")[1] for c in services] == ["Consideration", "NumberOfActivities", "Fees", "Taxes"]
    consideration = _quarters(services, "Consideration", "ConsQ")
    assert consideration == [1330, 0, 1800, 300]
    assert _quarters(services, "NumberOfActivities", "NumbQ") == [2, 0, 1, 1]
    assert _quarters(services, "Fees", "FeesQ") == [150, 0, 200, 0]
    assert _quarters(services, "Taxes", "TaxQ") == [20, 0, 0, 0]
    assert {e.get("currCode") for e in services.iter() if e.tag.endswith(("Q1", "Q2", "Q3", "Q4"))} - {None} == {"EUR"}
    async with sessionmaker() as session:
        stored = await service.seller_of(session, seller.user.id, Environment.live)
        assert stored is not None
        year = views.seller(await service.seller_snapshot(session, stored, YEAR))
    assert Decimal(sum(consideration)) == year.total_consideration_eur
    assert sum(_quarters(services, "NumberOfActivities", "NumbQ")) == year.number_of_activities


async def test_amounts_are_whole_euros_rounded_half_up_per_quarter(
    seller: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await import_rows(
        sessionmaker,
        [
            row("a", seller.user.id, dt.date(YEAR, 1, 5), "10.50", "0", "0"),
            row("b", seller.user.id, dt.date(YEAR, 4, 5), "10.49", "0.49", "0"),
        ],
    )
    root, _ = await _export(sessionmaker)
    services = root.find("dpi:DPIBody/dpi:ReportableSeller/dpi:RelevantActivities/dpi:PersonalServices", NS)
    assert services is not None
    assert _quarters(services, "Consideration", "ConsQ") == [11, 10, 0, 0]
    assert _quarters(services, "Fees", "FeesQ") == [0, 0, 0, 0]


async def test_the_first_export_sets_reported_at_and_a_later_one_keeps_it(
    seller: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await import_rows(sessionmaker, [row("a", seller.user.id, dt.date(YEAR, 1, 5))])
    async with sessionmaker() as session:
        stored = await service.seller_of(session, seller.user.id, Environment.live)
        assert stored is not None
        assert (await service.seller_snapshot(session, stored, YEAR)).reported_at is None
    await _export(sessionmaker)
    async with sessionmaker() as session:
        first = (await service.seller_snapshot(session, stored, YEAR)).reported_at
    assert first is not None
    await _export(sessionmaker)
    async with sessionmaker() as session:
        assert (await service.seller_snapshot(session, stored, YEAR)).reported_at == first
        assert (await service.seller_snapshot(session, stored, YEAR + 1)).reported_at is None


async def test_an_empty_year_is_a_nothing_to_report_message_and_the_sandbox_marks_test_data(
    seller: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    root, made = await _export(sessionmaker)
    assert made.sellers == 0
    assert root.findtext("dpi:MessageSpec/dpi:MessageTypeIndic", namespaces=NS) == "DPI403"
    await make_seller(sessionmaker, seller.user, Environment.test)
    await import_rows(sessionmaker, [row("a", seller.user.id, dt.date(YEAR, 1, 5))], Environment.test)
    sandbox, made = await _export(sessionmaker, Environment.test)
    assert made.sellers == 1
    kinds = {e.text for e in sandbox.iter(f"{{{dpi.STF_NS}}}DocTypeIndic")}
    assert kinds == {"OECD11"}
    live, _ = await _export(sessionmaker)
    assert live.find("dpi:DPIBody/dpi:ReportableSeller", NS) is None, "sandbox activities never reach production"
