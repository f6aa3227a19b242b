"""The DAC7 report as OECD DPI XML (schema v1.0, namespace `urn:oecd:ties:dpi:v1`).

`MessageSpec`, then `DPIBody` with the `PlatformOperator` and one `ReportableSeller` per reportable seller of the
year: its TIN and member state under `Identity/IndividualSeller/Standard/IndSellerID`, and per activity type
(`PersonalServices`, `SaleOfGoods`) the four quarters of `Consideration` (net), `NumberOfActivities`, `Fees` and
`Taxes`. DPI amounts are whole units (`MonAmnt_Type` is an integer with `currCode`): each quarter is rounded half
up to whole euros, so the four quarters may differ from the exact yearly total by at most 2 euros.

Not in the file, because the service does not collect them yet: the seller's name, address and date of birth and
the operator's address, which the schema also requires before a tax authority accepts the file. Sandbox exports
mark every record as test data (`OECD11`, DPI's "new test data"); production exports as new data (`OECD1`).
"""

from __future__ import annotations

import datetime as dt
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.dac7.figures import QUARTERS, Bucket, YearFigures, year_figures
from compliance_api.dac7.models import ActivityType, Dac7Activity, Dac7Report, Dac7Seller
from compliance_api.kit.environment import Environment, scoped

DPI_NS = "urn:oecd:ties:dpi:v1"
STF_NS = "urn:oecd:ties:dpistf:v1"
ET.register_namespace("dpi", DPI_NS)
ET.register_namespace("stf", STF_NS)

ACTIVITY_ELEMENTS = {ActivityType.personal_services: "PersonalServices", ActivityType.sale_of_goods: "SaleOfGoods"}


@dataclass(frozen=True, slots=True)
class Operator:
    """The reporting platform operator: name, TIN and the member state it reports to."""

    name: str
    tin: str
    country: str


@dataclass(frozen=True, slots=True)
class Export:
    xml: bytes
    message_ref_id: str
    sellers: int


def _dpi(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, f"{{{DPI_NS}}}{tag}", attributes)
    element.text = text
    return element


def whole_euros(cents: int) -> int:
    return int((Decimal(cents) / 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _doc_spec(parent: ET.Element, environment: Environment, ref: str) -> None:
    spec = _dpi(parent, "DocSpec")
    indicator = ET.SubElement(spec, f"{{{STF_NS}}}DocTypeIndic")
    indicator.text = "OECD1" if environment is Environment.live else "OECD11"
    ET.SubElement(spec, f"{{{STF_NS}}}DocRefId").text = ref


def _message_spec(root: ET.Element, operator: Operator, ref: str, year: int, empty: bool, now: dt.datetime) -> None:
    spec = _dpi(root, "MessageSpec")
    _dpi(spec, "SendingEntityIN", operator.tin)
    _dpi(spec, "TransmittingCountry", operator.country)
    _dpi(spec, "ReceivingCountry", operator.country)
    _dpi(spec, "MessageType", "DPI")
    _dpi(spec, "MessageRefId", ref)
    _dpi(spec, "MessageTypeIndic", "DPI403" if empty else "DPI401")
    _dpi(spec, "ReportingPeriod", f"{year}-12-31")
    _dpi(spec, "Timestamp", now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S"))


def _quarters(parent: ET.Element, group: str, prefix: str, values: list[int], *, money: bool) -> None:
    node = _dpi(parent, group)
    for quarter, value in zip(QUARTERS, values, strict=True):
        if money:
            _dpi(node, f"{prefix}{quarter}", str(whole_euros(value)), currCode="EUR")
        else:
            _dpi(node, f"{prefix}{quarter}", str(value))


def _activity(parent: ET.Element, element: str, buckets: list[Bucket]) -> None:
    node = _dpi(parent, element)
    _quarters(node, "Consideration", "ConsQ", [b.consideration_cents for b in buckets], money=True)
    _quarters(node, "NumberOfActivities", "NumbQ", [b.count for b in buckets], money=False)
    _quarters(node, "Fees", "FeesQ", [b.fees_cents for b in buckets], money=True)
    _quarters(node, "Taxes", "TaxQ", [b.taxes_cents for b in buckets], money=True)


def _seller(body: ET.Element, seller: Dac7Seller, figures: YearFigures, ref: str) -> None:
    node = _dpi(body, "ReportableSeller")
    standard = _dpi(_dpi(_dpi(node, "Identity"), "IndividualSeller"), "Standard")
    identity = _dpi(standard, "IndSellerID")
    _dpi(identity, "ResCountryCode", seller.member_state)
    _dpi(identity, "TIN", seller.tin, issuedBy=seller.member_state)
    activities = _dpi(node, "RelevantActivities")
    for kind, element in ACTIVITY_ELEMENTS.items():
        buckets = [figures.bucket(kind, q) for q in QUARTERS]
        if any(b.count for b in buckets):
            _activity(activities, element, buckets)
    _doc_spec(node, seller.environment, ref)


async def _reportable(
    session: AsyncSession, environment: Environment, year: int
) -> list[tuple[Dac7Seller, YearFigures]]:
    ids = scoped(select(Dac7Activity.seller_id), Dac7Activity, environment).where(Dac7Activity.year == year)
    sellers = list(
        await session.scalars(
            scoped(select(Dac7Seller), Dac7Seller, environment)
            .where(Dac7Seller.id.in_(ids.distinct()))
            .order_by(Dac7Seller.member_state, Dac7Seller.tin, Dac7Seller.id)
        )
    )
    figures = await year_figures(session, [s.id for s in sellers], year)
    return [(s, figures[s.id]) for s in sellers if figures[s.id].reportable]


async def export_year(
    session: AsyncSession, environment: Environment, year: int, operator: Operator, *, now: dt.datetime
) -> Export:
    """The DPI file for every reportable seller of `year`; each seller's first export sets its `reported_at`."""
    reportable = await _reportable(session, environment, year)
    prefix = f"{operator.country}{year}{operator.tin}"
    message_ref = f"{prefix}-{uuid.uuid4().hex}"
    root = ET.Element(f"{{{DPI_NS}}}DPI_OECD", {"version": "1.0"})
    _message_spec(root, operator, message_ref, year, not reportable, now)
    body = _dpi(root, "DPIBody")
    platform = _dpi(body, "PlatformOperator")
    _dpi(platform, "ResCountryCode", operator.country)
    _dpi(platform, "TIN", operator.tin, issuedBy=operator.country)
    _dpi(platform, "Name", operator.name)
    _doc_spec(platform, environment, f"{prefix}-{uuid.uuid4().hex}")
    for seller, figures in reportable:
        _seller(body, seller, figures, f"{prefix}-{uuid.uuid4().hex}")
    await _record_reported(session, [s for s, _ in reportable], year, message_ref, now)
    ET.indent(root)
    return Export(ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n", message_ref, len(reportable))


async def _record_reported(
    session: AsyncSession, sellers: list[Dac7Seller], year: int, message_ref: str, now: dt.datetime
) -> None:
    done = set(
        await session.scalars(
            select(Dac7Report.seller_id).where(
                Dac7Report.year == year, Dac7Report.seller_id.in_([s.id for s in sellers])
            )
        )
    )
    for seller in sellers:
        if seller.id not in done:
            session.add(Dac7Report(seller_id=seller.id, year=year, message_ref_id=message_ref, reported_at=now))
    await session.flush()
