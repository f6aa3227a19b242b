"""TIN checks per EU member state (DAC7 asks for a format and check-digit test, Annex V), with python-stdnum.

Each member state maps to the python-stdnum modules of its individuals' tax numbers; a TIN is valid when one of
them accepts it, and stored in that module's compact form. Member states python-stdnum has no individual TIN for
(CY, HU, LU, MT) get only a generic check: 2 to 20 letters and digits.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from types import ModuleType

from stdnum.exceptions import ValidationError

TIN_MODULES: dict[str, tuple[str, ...]] = {
    "AT": ("at.tin",),
    "BE": ("be.nn", "be.bis"),
    "BG": ("bg.egn", "bg.pnf"),
    "CZ": ("cz.rc",),
    "DE": ("de.idnr",),
    "DK": ("dk.cpr",),
    "EE": ("ee.ik",),
    "ES": ("es.nif",),
    "FI": ("fi.hetu",),
    "FR": ("fr.nif",),
    "GR": ("gr.vat",),  # the AFM, the Greek tax number of individuals and entities alike
    "HR": ("hr.oib",),
    "IE": ("ie.pps",),
    "IT": ("it.codicefiscale",),
    "LT": ("lt.asmens",),
    "LV": ("lv.pvn",),  # also a natural person's personal code
    "NL": ("nl.bsn",),
    "PL": ("pl.pesel", "pl.nip"),
    "PT": ("pt.nif",),
    "RO": ("ro.cnp",),
    "SE": ("se.personnummer",),
    "SI": ("si.ddv",),  # the davčna številka
    "SK": ("sk.rc",),
}
GENERIC_ONLY = ("CY", "HU", "LU", "MT")
MEMBER_STATES: tuple[str, ...] = tuple(sorted((*TIN_MODULES, *GENERIC_ONLY)))
GENERIC_TIN = re.compile(r"^[A-Z0-9]{2,20}$")


class InvalidTin(ValueError):
    """A TIN (or member state) refused; the message names the rule it broke."""


@dataclass(frozen=True, slots=True)
class CheckedTin:
    tin: str
    member_state: str
    rule: str


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"stdnum.{name}")


def _rule_name(module: ModuleType) -> str:
    """`stdnum.nl.bsn` (BSN (Burgerservicenummer, the Dutch citizen identification number))."""
    title = (module.__doc__ or "").strip().splitlines()[0].rstrip(".")
    return f"{module.__name__} ({title})"


def member_state(value: str) -> str:
    code = value.strip().upper()
    if code not in MEMBER_STATES:
        raise InvalidTin(f"{value!r} is not an EU member state code (one of {', '.join(MEMBER_STATES)})")
    return code


def check_tin(tin: str, state: str) -> CheckedTin:
    """The TIN in compact form if it is valid for the member state; else InvalidTin naming every rule tried."""
    code = member_state(state)
    if code in GENERIC_ONLY:
        compact = re.sub(r"[\s./-]", "", tin).upper()
        if not GENERIC_TIN.match(compact):
            raise InvalidTin(f"the TIN must be 2 to 20 letters and digits (generic rule for {code})")
        return CheckedTin(compact, code, "generic")
    failures: list[str] = []
    for name in TIN_MODULES[code]:
        module = _module(name)
        try:
            return CheckedTin(module.validate(tin), code, module.__name__)
        except ValidationError as exc:
            failures.append(f"{_rule_name(module)}: {str(exc).rstrip('.')}")
    raise InvalidTin(f"not a valid {code} TIN: " + "; ".join(failures))
