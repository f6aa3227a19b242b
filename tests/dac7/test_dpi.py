"""The DAC7 export: valid against the OECD DPI XML schema v1.0 for every kind of message (new, correction, deletion,
nothing to report), per-quarter figures adding up to the year, `reported_at`, and production refusing sellers that
lack data."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.dac7 import dpi, service, views
from compliance_api.dac7.identity import Dac7Tin, SellerIdentity
from compliance_api.dac7.models import Dac7Operator
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.dac7.conftest import TEST_BOX, complete_identity, import_rows, make_operator, make_seller, row
from tests.dac7.dpi_schema import schema_errors
from tests.passport.conftest import Account

NS = {"dpi": dpi.DPI_NS, "stf": dpi.STF_NS}
YEAR = 2025


@pytest.fixture(autouse=True)
async def operators(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    for environment in Environment:
        await make_operator(sessionmaker, environment)


async def _try_export(
    sessionmaker: async_sessionmaker[AsyncSession], out: Path, environment: Environment
) -> dpi.Export:
    async with sessionmaker.begin() as session:
        return await dpi.export_year(session, environment, YEAR, box=TEST_BOX, out=out, now=utcnow())


async def _export(
    sessionmaker: async_sessionmaker[AsyncSession],
    environment: Environment = Environment.live,
    *,
    tmp_path: Path,
) -> tuple[ET.Element, dpi.Export]:
    """Export, check the file against the OECD schema, and parse it."""
    out = tmp_path / f"dac7-{utcnow().timestamp()}.xml"
    made = await _try_export(sessionmaker, out, environment)
    assert made.path == out
    xml = out.read_bytes()
    assert schema_errors(xml) == []
    return ET.fromstring(xml), made


def _kinds(root: ET.Element) -> list[str | None]:
    return [
        s.findtext("dpi:DocSpec/stf:DocTypeIndic", namespaces=NS) for s in root.iterfind(".//dpi:ReportableSeller", NS)
    ]


def _quarters(node: ET.Element, group: str, prefix: str) -> list[int]:
    values = [node.find(f"dpi:{group}/dpi:{prefix}{q}", NS) for q in (1, 2, 3, 4)]
    assert all(v is not None and v.text is not None for v in values)
    return [int(v.text) for v in values if v is not None and v.text is not None]


async def test_the_export_has_the_dpi_structure_and_quarterly_totals_that_add_up(
    seller: Account, other_freelancer: Account, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
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
    root, made = await _export(sessionmaker, tmp_path=tmp_path)
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
    assert spec.findtext("dpi:MessageType", namespaces=NS) == "DAC7"
    assert spec.findtext("dpi:MessageTypeIndic", namespaces=NS) == "DPI401"
    assert spec.findtext("dpi:ReportingPeriod", namespaces=NS) == f"{YEAR}-12-31"
    assert spec.findtext("dpi:MessageRefId", namespaces=NS) == made.message_ref_id
    platform = root.find("dpi:DPIBody/dpi:PlatformOperator", NS)
    assert platform is not None
    assert platform.findtext("dpi:Name", namespaces=NS) == "Demo Platform B.V."
    assert platform.findtext("dpi:Address/dpi:AddressFix/dpi:City", namespaces=NS) == "Amsterdam"
    assert platform.findtext("dpi:Nexus", namespaces=NS) == "RPONEX1"
    sellers = root.findall("dpi:DPIBody/dpi:ReportableSeller", NS)
    assert len(sellers) == made.sellers == 1, "the goods-only seller below the de minimis is excluded"
    reported = sellers[0]
    identity = reported.find("dpi:Identity/dpi:IndividualSeller/dpi:Standard/dpi:IndSellerID", NS)
    assert identity is not None
    assert identity.findtext("dpi:ResCountryCode", namespaces=NS) == "NL"
    tin = identity.find("dpi:TIN", NS)
    assert tin is not None
    assert (tin.text, tin.get("issuedBy")) == ("111222333", "NL")
    assert identity.findtext("dpi:Name/dpi:LastName", namespaces=NS) == "de Vries"
    assert identity.findtext("dpi:BirthInfo/dpi:BirthDate", namespaces=NS) == "1990-04-01"
    assert identity.findtext("dpi:Address/dpi:CountryCode", namespaces=NS) == "NL"
    iban = reported.find("dpi:Identity/dpi:IndividualSeller/dpi:Standard/dpi:FinancialIdentifier/dpi:Identifier", NS)
    assert iban is not None
    assert (iban.text, iban.get("AccountNumberType")) == ("NL91ABNA0417164300", "IBAN")
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
        year = views.seller(await service.seller_snapshot(session, stored, YEAR, TEST_BOX))
    assert Decimal(sum(consideration)) == year.total_consideration_eur
    assert sum(_quarters(services, "NumberOfActivities", "NumbQ")) == year.number_of_activities


async def test_amounts_are_whole_euros_rounded_half_up_per_quarter(
    seller: Account, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    await import_rows(
        sessionmaker,
        [
            row("a", seller.user.id, dt.date(YEAR, 1, 5), "10.50", "0", "0"),
            row("b", seller.user.id, dt.date(YEAR, 4, 5), "10.49", "0.49", "0"),
        ],
    )
    root, _ = await _export(sessionmaker, tmp_path=tmp_path)
    services = root.find("dpi:DPIBody/dpi:ReportableSeller/dpi:RelevantActivities/dpi:PersonalServices", NS)
    assert services is not None
    assert _quarters(services, "Consideration", "ConsQ") == [11, 10, 0, 0]
    assert _quarters(services, "Fees", "FeesQ") == [0, 0, 0, 0]


async def test_the_first_export_sets_reported_at_and_a_later_one_keeps_it(
    seller: Account, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    await import_rows(sessionmaker, [row("a", seller.user.id, dt.date(YEAR, 1, 5))])
    async with sessionmaker() as session:
        stored = await service.seller_of(session, seller.user.id, Environment.live)
        assert stored is not None
        assert (await service.seller_snapshot(session, stored, YEAR, TEST_BOX)).reported_at is None
    await _export(sessionmaker, tmp_path=tmp_path)
    async with sessionmaker() as session:
        first = (await service.seller_snapshot(session, stored, YEAR, TEST_BOX)).reported_at
    assert first is not None
    await import_rows(sessionmaker, [row("a", seller.user.id, dt.date(YEAR, 1, 5), "200.00")])
    await _export(sessionmaker, tmp_path=tmp_path)
    async with sessionmaker() as session:
        assert (await service.seller_snapshot(session, stored, YEAR, TEST_BOX)).reported_at == first
        assert (await service.seller_snapshot(session, stored, YEAR + 1, TEST_BOX)).reported_at is None


async def test_an_empty_year_is_a_nothing_to_report_message_and_the_sandbox_marks_test_data(
    seller: Account, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    root, made = await _export(sessionmaker, tmp_path=tmp_path)
    assert made.sellers == 0
    assert root.findtext("dpi:MessageSpec/dpi:MessageTypeIndic", namespaces=NS) == "DPI403"
    await make_seller(sessionmaker, seller.user, Environment.test)
    await import_rows(sessionmaker, [row("a", seller.user.id, dt.date(YEAR, 1, 5))], Environment.test)
    sandbox, made = await _export(sessionmaker, Environment.test, tmp_path=tmp_path)
    assert made.sellers == 1
    kinds = {e.text for e in sandbox.iter(f"{{{dpi.STF_NS}}}DocTypeIndic")}
    assert kinds == {"OECD11"}
    live, _ = await _export(sessionmaker, tmp_path=tmp_path)
    assert live.find("dpi:DPIBody/dpi:ReportableSeller", NS) is None, "sandbox activities never reach production"


async def test_a_changed_seller_is_sent_as_a_correction_and_an_unchanged_one_not_at_all(
    seller: Account, other_freelancer: Account, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    await make_seller(sessionmaker, other_freelancer.user, tin="36574261809", state="DE")
    await import_rows(
        sessionmaker,
        [row("a", seller.user.id, dt.date(YEAR, 1, 5)), row("b", other_freelancer.user.id, dt.date(YEAR, 2, 5))],
    )
    first, made = await _export(sessionmaker, tmp_path=tmp_path)
    assert first.findtext("dpi:MessageSpec/dpi:MessageTypeIndic", namespaces=NS) == "DPI401"
    assert _kinds(first) == ["OECD1", "OECD1"]
    refs = {
        s.findtext("dpi:DocSpec/stf:DocRefId", namespaces=NS) for s in first.iterfind(".//dpi:ReportableSeller", NS)
    }
    out = tmp_path / "unchanged.xml"
    assert (await _try_export(sessionmaker, out, Environment.live)).path is None, "nothing changed: no file"
    assert not out.exists()
    await make_seller(sessionmaker, seller.user, identity=complete_identity(last_name="Jansen"))
    second, made = await _export(sessionmaker, tmp_path=tmp_path)
    assert second.findtext("dpi:MessageSpec/dpi:MessageTypeIndic", namespaces=NS) == "DPI402"
    assert _kinds(second) == ["OECD2"]
    corrected = second.find(".//dpi:ReportableSeller", NS)
    assert corrected is not None
    assert corrected.findtext(".//dpi:LastName", namespaces=NS) == "Jansen"
    assert corrected.findtext("dpi:DocSpec/stf:CorrDocRefId", namespaces=NS) in refs
    operator_kind = second.findtext("dpi:DPIBody/dpi:PlatformOperator/dpi:DocSpec/stf:DocTypeIndic", namespaces=NS)
    assert operator_kind == "OECD0", "the operator is resent, unchanged, in a correction"
    assert made.counts == {dpi.DocTypeRecord.new: 0, dpi.DocTypeRecord.corrected: 1, dpi.DocTypeRecord.deleted: 0}


async def test_a_withdrawn_seller_is_sent_as_a_deletion_and_the_sandbox_uses_test_indicators(
    seller: Account, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    await make_seller(sessionmaker, seller.user, Environment.test)
    await import_rows(sessionmaker, [row("a", seller.user.id, dt.date(YEAR, 1, 5))], Environment.test)
    first, _ = await _export(sessionmaker, Environment.test, tmp_path=tmp_path)
    assert _kinds(first) == ["OECD11"]
    await make_seller(sessionmaker, seller.user, Environment.test, identity=complete_identity(last_name="Jansen"))
    corrected, _ = await _export(sessionmaker, Environment.test, tmp_path=tmp_path)
    assert _kinds(corrected) == ["OECD12"]
    previous = corrected.findtext(".//dpi:ReportableSeller/dpi:DocSpec/stf:DocRefId", namespaces=NS)
    async with sessionmaker.begin() as session:
        await service.withdraw(session, seller.user, Environment.test, YEAR, utcnow())
    deleted, made = await _export(sessionmaker, Environment.test, tmp_path=tmp_path)
    assert deleted.findtext("dpi:MessageSpec/dpi:MessageTypeIndic", namespaces=NS) == "DPI402"
    assert _kinds(deleted) == ["OECD13"]
    assert deleted.findtext(".//dpi:ReportableSeller/dpi:DocSpec/stf:CorrDocRefId", namespaces=NS) == previous
    assert made.counts[dpi.DocTypeRecord.deleted] == 1
    assert (await _try_export(sessionmaker, tmp_path / "again.xml", Environment.test)).path is None
    async with sessionmaker.begin() as session:
        with pytest.raises(service.Dac7Error, match="no record sent"):
            await service.withdraw(session, seller.user, Environment.test, YEAR, utcnow())


async def test_entities_and_individuals_without_a_tin_validate(
    seller: Account, other_freelancer: Account, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    entity = SellerIdentity(
        kind="entity",
        legal_name="De Vries Consultancy B.V.",
        business_registration_number="12345678",
        vat="NL004495445B01",
        address=complete_identity().address,
        tins=[Dac7Tin(tin="111222333", issued_by="NL")],
        permanent_establishments=["BE", "DE"],
    )
    no_tin = SellerIdentity.model_validate(
        {
            **complete_identity().model_dump(),
            "tins": [],
            "tin_not_issued": True,
            "place_of_birth": {"city": "Utrecht", "country": "NL"},
        }
    )
    assert entity.problems() == []
    assert no_tin.problems() == []
    await make_seller(sessionmaker, seller.user, identity=entity)
    await make_seller(sessionmaker, other_freelancer.user, identity=no_tin)
    await import_rows(
        sessionmaker,
        [row("a", seller.user.id, dt.date(YEAR, 1, 5)), row("b", other_freelancer.user.id, dt.date(YEAR, 2, 5))],
    )
    root, _ = await _export(sessionmaker, tmp_path=tmp_path)
    assert root.findtext(".//dpi:EntSellerID/dpi:IN", namespaces=NS) == "12345678"
    assert [e.text for e in root.iterfind(".//dpi:PermanentEstablishment", NS)] == ["BE", "DE"]
    unknown = root.find(".//dpi:IndSellerID/dpi:TIN", NS)
    assert unknown is not None
    assert unknown.get("unknown") == "true"
    assert root.findtext(".//dpi:IndSellerID/dpi:BirthInfo/dpi:BirthPlace/dpi:City", namespaces=NS) == "Utrecht"


async def test_production_stops_on_sellers_lacking_data_and_the_sandbox_leaves_them_out(
    seller: Account, other_freelancer: Account, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    tin_only = SellerIdentity(tins=[Dac7Tin(tin="36574261809", issued_by="DE")])
    for environment in Environment:
        await make_seller(sessionmaker, other_freelancer.user, environment, identity=tin_only)
        await make_seller(sessionmaker, seller.user, environment)
        await import_rows(
            sessionmaker,
            [
                row(f"a-{environment}", seller.user.id, dt.date(YEAR, 1, 5)),
                row(f"b-{environment}", other_freelancer.user.id, dt.date(YEAR, 2, 5)),
            ],
            environment,
        )
    out = tmp_path / "live.xml"
    with pytest.raises(dpi.MissingSellerData) as refused:
        await _try_export(sessionmaker, out, Environment.live)
    assert refused.value.lacking == [
        (other_freelancer.user.email, ["first_name", "last_name", "date_of_birth", "address"])
    ]
    assert not out.exists()
    sandbox, made = await _export(sessionmaker, Environment.test, tmp_path=tmp_path)
    assert len(_kinds(sandbox)) == 1
    assert made.lacking == refused.value.lacking


async def test_no_operator_no_export(sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path) -> None:
    async with sessionmaker.begin() as session:
        await session.execute(delete(Dac7Operator))
    with pytest.raises(dpi.NoOperator, match="dac7 operator"):
        await _try_export(sessionmaker, tmp_path / "x.xml", Environment.live)


async def test_a_seller_no_longer_reportable_is_deleted_in_production(
    seller: Account, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    await import_rows(sessionmaker, [row("a", seller.user.id, dt.date(YEAR, 1, 5))])
    first, _ = await _export(sessionmaker, tmp_path=tmp_path)
    sent = first.findtext(".//dpi:ReportableSeller/dpi:DocSpec/stf:DocRefId", namespaces=NS)
    await import_rows(sessionmaker, [row("a", seller.user.id, dt.date(YEAR, 1, 5), kind="sale_of_goods")])
    deleted, made = await _export(sessionmaker, tmp_path=tmp_path)
    assert _kinds(deleted) == ["OECD3"], "one sale of goods is an excluded seller"
    assert deleted.findtext(".//dpi:ReportableSeller/dpi:DocSpec/stf:CorrDocRefId", namespaces=NS) == sent
    assert made.message_type_indic == "DPI402"
    await import_rows(sessionmaker, [row("a", seller.user.id, dt.date(YEAR, 1, 5))])
    again, _ = await _export(sessionmaker, tmp_path=tmp_path)
    assert _kinds(again) == ["OECD1"], "reportable again after its deletion: a new record"
