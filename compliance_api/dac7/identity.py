"""A seller's DAC7 identity (Directive (EU) 2021/514, Annex V, Section III B): what the operator collects and reports.

An individual: first and last name, primary address, every TIN with its issuing member state (or the documented
absence of one, `tin_not_issued`), the VAT number if any, the date of birth, and the place of birth when no TIN is
given. An entity: legal name, primary address, TIN with its member state, business registration number, VAT number if
any, and the member states of its permanent establishments. Either may add the financial account identifier (IBAN) and
its holder. TINs are checked per member state (`tin.py`), VAT numbers and IBANs with python-stdnum, countries against
ISO 3166-1 (Babel's territory list).

The whole identity is one JSON document, sealed at rest (`sealing.py`); `missing` says what a report still lacks, so
an identity recorded before these fields existed (a TIN only) is kept and named by the export, not refused.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from babel import Locale
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator
from stdnum import iban as stdnum_iban
from stdnum.eu import vat as stdnum_vat
from stdnum.exceptions import ValidationError as StdnumError

from compliance_api.dac7.tin import MEMBER_STATES, InvalidTin, check_tin

SellerKind = Literal["individual", "entity"]
ISO_COUNTRIES = frozenset(str(code) for code in Locale("en").territories if str(code).isalpha() and len(str(code)) == 2)
EARLIEST_BIRTH = dt.date(1900, 1, 1)
SEALED = {"sealed": True}
"""Validation context of an identity read back from its seal: checked when written, so the python-stdnum checks
(TINs, VAT numbers, IBANs) are not run again (an export opens every seller's identity)."""


def _sealed(info: ValidationInfo) -> bool:
    return bool(info.context and info.context.get("sealed"))


def _country(value: str) -> str:
    code = value.strip().upper()
    if code not in ISO_COUNTRIES:
        raise ValueError("must be an ISO 3166-1 alpha-2 country code, such as NL")
    return code


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    stripped = " ".join(value.split())
    if not stripped:
        raise ValueError("must not be blank")
    return stripped


class IdentityPart(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Dac7Address(IdentityPart):
    """The primary address; `country` is ISO 3166-1 alpha-2."""

    country: str = Field(examples=["NL"])
    street: str | None = Field(default=None, max_length=200, examples=["Damrak"])
    building: str | None = Field(default=None, max_length=200, examples=["1"])
    post_code: str | None = Field(default=None, max_length=200, examples=["1012 LG"])
    city: str = Field(min_length=1, max_length=200, examples=["Amsterdam"])

    _country = field_validator("country")(_country)
    _clean = field_validator("street", "building", "post_code", "city")(_clean)


class Dac7BirthPlace(IdentityPart):
    city: str = Field(min_length=1, max_length=200, examples=["Utrecht"])
    country: str = Field(examples=["NL"])

    _country = field_validator("country")(_country)


class Dac7Tin(IdentityPart):
    tin: str = Field(min_length=1, max_length=200, examples=["111222333"])
    issued_by: str = Field(description="The EU member state that issued it.", examples=["NL"])
    rule: str | None = Field(default=None, description="The check it passed (set by the service).")

    @model_validator(mode="after")
    def _checked(self, info: ValidationInfo) -> Dac7Tin:
        if _sealed(info):
            return self
        try:
            checked = check_tin(self.tin, self.issued_by)
        except InvalidTin as exc:
            raise ValueError(str(exc)) from None
        self.tin, self.issued_by, self.rule = checked.tin, checked.member_state, checked.rule
        return self


class Dac7FinancialAccount(IdentityPart):
    iban: str = Field(min_length=1, max_length=200, examples=["NL91ABNA0417164300"])
    holder: str | None = Field(default=None, max_length=200, examples=["J. de Vries"])

    @field_validator("iban")
    @classmethod
    def _iban(cls, value: str, info: ValidationInfo) -> str:
        if _sealed(info):
            return value
        try:
            return str(stdnum_iban.validate(value))
        except StdnumError as exc:
            raise ValueError(f"not a valid IBAN: {str(exc).rstrip('.')}") from None


class SellerIdentity(IdentityPart):
    """What the platform collects about one seller (Annex V), in one environment."""

    kind: SellerKind = "individual"
    first_name: str | None = Field(default=None, max_length=200, examples=["Jan"])
    last_name: str | None = Field(default=None, max_length=200, examples=["de Vries"])
    legal_name: str | None = Field(default=None, max_length=200, description="Entities only.")
    date_of_birth: dt.date | None = Field(default=None, examples=["1990-04-01"])
    place_of_birth: Dac7BirthPlace | None = None
    address: Dac7Address | None = None
    tins: list[Dac7Tin] = Field(default_factory=list, max_length=10)
    tin_not_issued: bool = Field(
        default=False, description="The seller's member state of residence issues it no TIN (documented absence)."
    )
    vat: str | None = Field(default=None, max_length=200, examples=["NL123456789B01"])
    business_registration_number: str | None = Field(default=None, max_length=200, description="Entities only.")
    permanent_establishments: list[str] = Field(default_factory=list, max_length=27, description="Entities only.")
    financial_account: Dac7FinancialAccount | None = None

    _clean = field_validator("first_name", "last_name", "legal_name", "business_registration_number")(_clean)

    @field_validator("date_of_birth")
    @classmethod
    def _born(cls, value: dt.date | None) -> dt.date | None:
        if value is not None and not EARLIEST_BIRTH <= value <= dt.datetime.now(dt.UTC).date():
            raise ValueError(f"must be from {EARLIEST_BIRTH.isoformat()} to today")
        return value

    @field_validator("vat")
    @classmethod
    def _vat(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None or _sealed(info):
            return value
        try:
            return str(stdnum_vat.validate(value))
        except StdnumError as exc:
            raise ValueError(f"not a valid EU VAT number: {str(exc).rstrip('.')}") from None

    @field_validator("permanent_establishments")
    @classmethod
    def _states(cls, value: list[str]) -> list[str]:
        codes = [code.strip().upper() for code in value]
        for code in codes:
            if code not in MEMBER_STATES:
                raise ValueError(f"each must be an EU member state code (one of {', '.join(MEMBER_STATES)})")
        return list(dict.fromkeys(codes))

    @property
    def display_name(self) -> str:
        if self.kind == "entity":
            return self.legal_name or ""
        return " ".join(p for p in (self.first_name, self.last_name) if p)

    @property
    def member_state(self) -> str | None:
        """The member state of residence: the address's country if it is one, else the first TIN's."""
        if self.address is not None and self.address.country in MEMBER_STATES:
            return self.address.country
        return self.tins[0].issued_by if self.tins else None

    def missing(self) -> list[str]:
        """The fields a DAC7 report still lacks, by name; empty when the identity is complete."""
        if self.kind == "entity":
            wanted = {"legal_name": self.legal_name, "business_registration_number": self.business_registration_number}
            lacking = [name for name, value in wanted.items() if not value]
            lacking += [] if self.tins else ["tins"]
        else:
            wanted_person = {"first_name": self.first_name, "last_name": self.last_name}
            lacking = [name for name, value in wanted_person.items() if not value]
            lacking += [] if self.date_of_birth else ["date_of_birth"]
            if not self.tins and not self.tin_not_issued:
                lacking.append("tins")
            if not self.tins and self.place_of_birth is None:
                lacking.append("place_of_birth")
        if self.address is None:
            lacking.append("address")
        elif self.member_state is None:
            lacking.append("address.country")
        return lacking

    def misplaced(self) -> list[tuple[str, str]]:
        """Fields that do not belong to this kind of seller, with why (an entity has no date of birth)."""
        if self.kind == "entity":
            person = {"first_name", "last_name", "date_of_birth", "place_of_birth"}
            return [(name, "is for individual sellers") for name in sorted(person) if getattr(self, name)]
        entity = {"legal_name", "business_registration_number", "permanent_establishments"}
        return [(name, "is for entity sellers") for name in sorted(entity) if getattr(self, name)]

    def problems(self) -> list[tuple[str, str]]:
        """Every reason this identity cannot be recorded as complete: what is missing, or belongs to the other kind."""
        return [(name, "is required") for name in self.missing()] + self.misplaced()


def refusals(exc: ValidationError) -> list[tuple[str, str]]:
    """A pydantic refusal as (dotted field, message), without the value refused (it is personal data)."""
    return [(".".join(str(p) for p in error["loc"]) or "(body)", error["msg"]) for error in exc.errors()]
