"""The DAC7 report as OECD DPI XML (schema v1.0, namespace `urn:oecd:ties:dpi:v1`), `MessageType` `DAC7`.

`MessageSpec`, then `DPIBody` with the `PlatformOperator` (its name, TIN, address and nexus, `operator.py`) and one
`ReportableSeller` per seller record to send: the identity (`identity.py`: name, address, TINs or their absence, VAT,
date and place of birth; an entity's legal name, business registration number and permanent establishments; the IBAN
and its holder) and per activity type the four quarters of `Consideration` (net), `NumberOfActivities`, `Fees` and
`Taxes`. DPI amounts are whole units (`MonAmnt_Type` is an integer with `currCode`): each quarter is rounded half up
to whole euros, so the four quarters may differ from the exact yearly total by at most 2 euros.

What an export sends for a year, seller by seller (`dac7_report` remembers what was sent):
- a reportable seller never sent: a new record (`OECD1`);
- one sent whose record has changed since (identity or figures): a correction (`OECD2`, `CorrDocRefId` = the record
  it replaces);
- one sent that is no longer reportable, or that the operator withdrew (`dac7 withdraw`): a deletion (`OECD3`);
- one sent and unchanged: nothing.
The message is `DPI402` when it holds a correction or deletion, else `DPI401`; a year with nothing ever to report is
`DPI403`; a year already sent with nothing new gives no file. The sandbox marks records as test data (`OECD10`–`13`).

Sellers are read and written 1,000 at a time, each record serialised as soon as it is made into a spool file, so
memory stays flat whatever the number of sellers. In production a seller whose identity lacks what a report needs
stops the export with the list of who lacks what; the sandbox leaves such sellers out and lists them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import shutil
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO, NamedTuple

from lxml import etree as ET
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.dac7 import queries
from compliance_api.dac7.figures import CHUNK, QUARTERS, Bucket, YearFigures, year_figures
from compliance_api.dac7.identity import Dac7Address, SellerIdentity
from compliance_api.dac7.models import ActivityType, Dac7Report
from compliance_api.dac7.operator import OperatorIdentity, operator_of
from compliance_api.dac7.sealing import IdentityBox
from compliance_api.kit.environment import Environment

DPI_NS = "urn:oecd:ties:dpi:v1"
STF_NS = "urn:oecd:ties:dpistf:v1"
NSMAP = {"dpi": DPI_NS, "stf": STF_NS}
MESSAGE_TYPE = "DAC7"  # the only value for exchanges under Directive 2021/514 (DPI's MessageType_EnumType)
ROOT_OPEN = (
    f'<?xml version="1.0" encoding="utf-8"?>\n<dpi:DPI_OECD xmlns:dpi="{DPI_NS}" xmlns:stf="{STF_NS}" version="1.0">\n'
).encode()
ROOT_CLOSE = b"</dpi:DPI_OECD>\n"

ACTIVITY_ELEMENTS = {ActivityType.personal_services: "PersonalServices", ActivityType.sale_of_goods: "SaleOfGoods"}


class DocTypeRecord(StrEnum):
    """What a record does, and its `DocTypeIndic` in production and in the sandbox (test data)."""

    resent = "resent"
    new = "new"
    corrected = "corrected"
    deleted = "deleted"

    def indicator(self, environment: Environment) -> str:
        number = {"resent": 0, "new": 1, "corrected": 2, "deleted": 3}[self.value]
        return f"OECD{number}" if environment is Environment.live else f"OECD1{number}"


class MissingSellerData(ValueError):
    """Production sellers whose identity lacks what a DAC7 report needs: nothing was written."""

    def __init__(self, lacking: Sequence[tuple[str, list[str]]]) -> None:
        self.lacking = list(lacking)
        lines = "\n".join(f"  {who}: {', '.join(fields)}" for who, fields in self.lacking)
        super().__init__(f"{len(self.lacking)} reportable sellers lack data a DAC7 report needs:\n{lines}")


class NoOperator(ValueError):
    def __init__(self, environment: Environment) -> None:
        super().__init__(
            f"no DAC7 platform operator in {environment.label}: set it with `compliance-api dac7 operator`"
        )


@dataclass(slots=True)
class Export:
    """What an export wrote (`path` None: nothing to send) and who it left out (sandbox only)."""

    message_ref_id: str
    message_type_indic: str | None = None
    path: Path | None = None
    counts: dict[DocTypeRecord, int] = field(
        default_factory=lambda: {r: 0 for r in DocTypeRecord if r is not DocTypeRecord.resent}
    )
    lacking: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def sellers(self) -> int:
        return sum(self.counts.values())


def _dpi(parent: ET._Element | None, tag: str, text: str | None = None, **attributes: str) -> ET._Element:
    name = f"{{{DPI_NS}}}{tag}"
    element = ET.Element(name, attributes, nsmap=NSMAP) if parent is None else ET.SubElement(parent, name, attributes)
    element.text = text
    return element


def whole_euros(cents: int) -> int:
    return int((Decimal(cents) / 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _doc_spec(parent: ET._Element, indicator: str, ref: str, corrects: str | None = None) -> None:
    spec = _dpi(parent, "DocSpec")
    ET.SubElement(spec, f"{{{STF_NS}}}DocTypeIndic").text = indicator
    ET.SubElement(spec, f"{{{STF_NS}}}DocRefId").text = ref
    if corrects is not None:
        ET.SubElement(spec, f"{{{STF_NS}}}CorrDocRefId").text = corrects


def _message_spec(operator: OperatorIdentity, ref: str, indicator: str, year: int, now: dt.datetime) -> ET._Element:
    spec = _dpi(None, "MessageSpec")
    _dpi(spec, "SendingEntityIN", operator.tin)
    _dpi(spec, "TransmittingCountry", operator.country)
    _dpi(spec, "ReceivingCountry", operator.country)
    _dpi(spec, "MessageType", MESSAGE_TYPE)
    _dpi(spec, "MessageRefId", ref)
    _dpi(spec, "MessageTypeIndic", indicator)
    _dpi(spec, "ReportingPeriod", f"{year}-12-31")
    _dpi(spec, "Timestamp", now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S"))
    return spec


def _address(parent: ET._Element, address: Dac7Address) -> None:
    node = _dpi(parent, "Address")
    _dpi(node, "CountryCode", address.country)
    fixed = _dpi(node, "AddressFix")
    for tag, value in (("Street", address.street), ("BuildingIdentifier", address.building)):
        if value:
            _dpi(fixed, tag, value)
    if address.post_code:
        _dpi(fixed, "PostCode", address.post_code)
    _dpi(fixed, "City", address.city)


def _platform_operator(operator: OperatorIdentity, indicator: str, ref: str) -> ET._Element:
    node = _dpi(None, "PlatformOperator")
    _dpi(node, "ResCountryCode", operator.country)
    _dpi(node, "TIN", operator.tin, issuedBy=operator.tin_issued_by)
    if operator.vat:
        _dpi(node, "VAT", operator.vat)
    _dpi(node, "Name", operator.name)
    _address(node, operator.address)
    _dpi(node, "Nexus", operator.nexus.value)
    _dpi(node, "AssumedReporting", "false")
    _doc_spec(node, indicator, ref)
    return node


def _tins(parent: ET._Element, identity: SellerIdentity, residence: str) -> None:
    for tin in identity.tins:
        _dpi(parent, "TIN", tin.tin, issuedBy=tin.issued_by)
    if not identity.tins:  # the documented absence of a TIN (an individual with a place of birth)
        _dpi(parent, "TIN", "", issuedBy=residence, unknown="true")


def _financial_account(parent: ET._Element, identity: SellerIdentity) -> None:
    account = identity.financial_account
    if account is None:
        return
    node = _dpi(parent, "FinancialIdentifier")
    _dpi(node, "Identifier", account.iban, AccountNumberType="IBAN")
    if account.holder:
        _dpi(node, "AccountHolderName", account.holder)


def _individual(identity_node: ET._Element, identity: SellerIdentity, residence: str) -> None:
    standard = _dpi(_dpi(identity_node, "IndividualSeller"), "Standard")
    person = _dpi(standard, "IndSellerID")
    _dpi(person, "ResCountryCode", residence)
    _tins(person, identity, residence)
    if identity.vat:
        _dpi(person, "VAT", identity.vat)
    name = _dpi(person, "Name")
    _dpi(name, "FirstName", identity.first_name)
    _dpi(name, "LastName", identity.last_name)
    assert identity.address is not None
    assert identity.date_of_birth is not None
    _address(person, identity.address)
    birth = _dpi(person, "BirthInfo")
    _dpi(birth, "BirthDate", identity.date_of_birth.isoformat())
    if identity.place_of_birth is not None:
        place = _dpi(birth, "BirthPlace")
        _dpi(place, "City", identity.place_of_birth.city)
        _dpi(_dpi(place, "CountryInfo"), "CountryCode", identity.place_of_birth.country)
    _financial_account(standard, identity)


def _entity(identity_node: ET._Element, identity: SellerIdentity, residence: str) -> None:
    standard = _dpi(_dpi(identity_node, "EntitySeller"), "Standard")
    entity = _dpi(standard, "EntSellerID")
    _dpi(entity, "ResCountryCode", residence)
    _tins(entity, identity, residence)
    if identity.business_registration_number:
        _dpi(entity, "IN", identity.business_registration_number, issuedBy=residence, INType="BRN")
    if identity.vat:
        _dpi(entity, "VAT", identity.vat)
    _dpi(entity, "Name", identity.legal_name)
    assert identity.address is not None  # `missing()` was empty
    _address(entity, identity.address)
    _financial_account(standard, identity)
    if identity.permanent_establishments:
        establishments = _dpi(standard, "PermanentEstablishments")
        for state in identity.permanent_establishments:
            _dpi(establishments, "PermanentEstablishment", state)


def _quarters(parent: ET._Element, group: str, prefix: str, values: list[int], *, money: bool) -> None:
    node = _dpi(parent, group)
    for quarter, value in zip(QUARTERS, values, strict=True):
        if money:
            _dpi(node, f"{prefix}{quarter}", str(whole_euros(value)), currCode="EUR")
        else:
            _dpi(node, f"{prefix}{quarter}", str(value))


def _activity(parent: ET._Element, element: str, buckets: list[Bucket]) -> None:
    node = _dpi(parent, element)
    _quarters(node, "Consideration", "ConsQ", [b.consideration_cents for b in buckets], money=True)
    _quarters(node, "NumberOfActivities", "NumbQ", [b.count for b in buckets], money=False)
    _quarters(node, "Fees", "FeesQ", [b.fees_cents for b in buckets], money=True)
    _quarters(node, "Taxes", "TaxQ", [b.taxes_cents for b in buckets], money=True)


def seller_record(seller: SellerRow, identity: SellerIdentity, figures: YearFigures) -> ET._Element:
    """A `ReportableSeller` without its `DocSpec` (what the digest of a sent record covers)."""
    node = _dpi(None, "ReportableSeller")
    identity_node = _dpi(node, "Identity")
    if identity.kind == "entity":
        _entity(identity_node, identity, seller.member_state)
    else:
        _individual(identity_node, identity, seller.member_state)
    activities = _dpi(node, "RelevantActivities")
    for kind, element in ACTIVITY_ELEMENTS.items():
        buckets = [figures.bucket(kind, q) for q in QUARTERS]
        if any(b.count for b in buckets):
            _activity(activities, element, buckets)
    return node


def _digest(doc_ref_id: str, record: bytes) -> str:
    """What a sent record said, salted with its DocRefId: a later export compares it to find corrections."""
    return hashlib.sha256(doc_ref_id.encode() + b"\n" + record).hexdigest()


class SellerRow(NamedTuple):
    """What the export reads of a seller (plain columns, not ORM rows: 100,000 of them go through one export)."""

    id: uuid.UUID
    user_id: uuid.UUID
    member_state: str
    kind: str
    identity_sealed: bytes | None


@dataclass(slots=True)
class _Run:
    session: AsyncSession
    environment: Environment
    year: int
    box: IdentityBox
    now: dt.datetime
    prefix: str
    message_ref: str
    spool: BinaryIO
    export: Export
    lacking_users: list[tuple[uuid.UUID, list[str]]] = field(default_factory=list)
    new_reports: list[dict[str, object]] = field(default_factory=list)

    def ref(self) -> str:
        return f"{self.prefix}-{uuid.uuid4().hex}"

    def emit(self, record: ET._Element, kind: DocTypeRecord, seller: SellerRow, report: Dac7Report | None) -> None:
        """Write the record with its DocSpec and remember it as the seller's last record sent for the year."""
        body = ET.tostring(record)
        doc_ref = self.ref()
        corrects = (
            report.doc_ref_id
            if report is not None and kind in (DocTypeRecord.corrected, DocTypeRecord.deleted)
            else None
        )
        _doc_spec(record, kind.indicator(self.environment), doc_ref, corrects)
        ET.indent(record, space="  ", level=2)
        self.spool.write(b"    " + ET.tostring(record) + b"\n")
        self.export.counts[kind] += 1
        digest = _digest(doc_ref, body)
        if report is None:  # inserted in bulk per chunk (`flush`)
            self.new_reports.append(
                {
                    "id": uuid.uuid4(),
                    "seller_id": seller.id,
                    "year": self.year,
                    "reported_at": self.now,
                    "message_ref_id": self.message_ref,
                    "doc_ref_id": doc_ref,
                    "digest": digest,
                    "exported_at": self.now,
                }
            )
            return
        report.doc_ref_id, report.digest, report.message_ref_id = doc_ref, digest, self.message_ref
        report.exported_at = self.now
        report.deleted_at = self.now if kind is DocTypeRecord.deleted else None

    async def flush(self) -> None:
        if self.new_reports:
            await queries.insert_reports(self.session, self.new_reports)
            self.new_reports = []
        await self.session.flush()

    def one(self, seller: SellerRow, figures: YearFigures, report: Dac7Report | None) -> None:
        """Send what changed for this seller since the last export, if anything."""
        sent = report is not None and report.doc_ref_id is not None and report.deleted_at is None
        withdrawn = report is not None and report.withdrawn_at is not None
        if not figures.reportable or withdrawn:
            if sent:
                self._record(seller, figures, report, DocTypeRecord.deleted)
            return
        self._record(seller, figures, report, DocTypeRecord.corrected if sent else DocTypeRecord.new)

    def _record(self, seller: SellerRow, figures: YearFigures, report: Dac7Report | None, kind: DocTypeRecord) -> None:
        identity = None if seller.identity_sealed is None else self.box.open(seller.identity_sealed, seller.id)
        lacking = ["identity"] if identity is None else identity.missing()
        if identity is None or lacking:
            self.lacking_users.append((seller.user_id, lacking))
            return
        record = seller_record(seller, identity, figures)
        if (
            kind is DocTypeRecord.corrected
            and report is not None
            and report.digest == _digest(report.doc_ref_id or "", ET.tostring(record))
        ):
            return  # unchanged since it was sent
        self.emit(record, kind, seller, report)


async def _candidates(session: AsyncSession, environment: Environment, year: int) -> list[uuid.UUID]:
    """Sellers with activities in the year, or with a record sent for it."""
    return await queries.export_candidates(session, environment, year)


async def _chunk(run: _Run, ids: list[uuid.UUID]) -> None:
    sellers = [SellerRow(*row) for row in await queries.seller_rows(run.session, ids)]
    figures = await year_figures(run.session, ids, run.year)
    reports = await queries.reports_of(run.session, ids, run.year)
    for seller in sellers:
        run.one(seller, figures[seller.id], reports.get(seller.id))
    await run.flush()
    for report in reports.values():  # keep the identity map, and so memory, flat
        run.session.expunge(report)


async def _emails(session: AsyncSession, lacking: list[tuple[uuid.UUID, list[str]]]) -> list[tuple[str, list[str]]]:
    users = [user_id for user_id, _ in lacking]
    emails: dict[uuid.UUID, str] = {}
    for start in range(0, len(users), CHUNK):
        emails.update(await queries.emails(session, users[start : start + CHUNK]))
    return [(emails.get(user_id, str(user_id)), fields) for user_id, fields in lacking]


async def export_year(
    session: AsyncSession,
    environment: Environment,
    year: int,
    *,
    box: IdentityBox,
    out: Path,
    now: dt.datetime,
) -> Export:
    """Write the year's DAC7 message to `out` (nothing when there is nothing to send) and record what was sent, in
    the caller's transaction. Raises `NoOperator`, or in production `MissingSellerData` before writing anything."""
    operator = await operator_of(session, environment)
    if operator is None:
        raise NoOperator(environment)
    prefix = f"{operator.country}{year}{operator.tin}"
    already_sent = await queries.any_sent(session, environment, year)
    export = Export(message_ref_id=f"{prefix}-{uuid.uuid4().hex}")
    with tempfile.TemporaryFile() as spool:
        run = _Run(session, environment, year, box, now, prefix, export.message_ref_id, spool, export)
        ids = await _candidates(session, environment, year)
        for start in range(0, len(ids), CHUNK):
            await _chunk(run, ids[start : start + CHUNK])
        export.lacking = await _emails(session, run.lacking_users) if run.lacking_users else []
        if export.lacking and environment is Environment.live:
            raise MissingSellerData(export.lacking)
        if export.sellers == 0 and already_sent:
            return export  # every record sent is still right: nothing to send
        _write(run, operator, out, spool)
    return export


def _write(run: _Run, operator: OperatorIdentity, out: Path, spool: BinaryIO) -> None:
    export = run.export
    fixes = export.counts[DocTypeRecord.corrected] + export.counts[DocTypeRecord.deleted]
    export.message_type_indic = "DPI402" if fixes else "DPI401" if export.sellers else "DPI403"
    platform_kind = DocTypeRecord.resent if fixes else DocTypeRecord.new
    spec = _message_spec(operator, export.message_ref_id, export.message_type_indic, run.year, run.now)
    platform = _platform_operator(operator, platform_kind.indicator(run.environment), run.ref())
    for element in (spec, platform):
        ET.indent(element, space="  ", level=1 if element is spec else 2)
    spool.seek(0)
    with out.open("wb") as file:
        file.write(ROOT_OPEN + b"  " + ET.tostring(spec) + b"\n  <dpi:DPIBody>\n    " + ET.tostring(platform) + b"\n")
        shutil.copyfileobj(spool, file)
        file.write(b"  </dpi:DPIBody>\n" + ROOT_CLOSE)
    export.path = out
