"""Validate DPI XML against the OECD DPI XML schema v1.0 kept under `tests/dac7/schemas/` (see its README)."""

from __future__ import annotations

import functools
from pathlib import Path

from lxml import etree

SCHEMA = Path(__file__).parent / "schemas" / "DPIXML_v1.0.xsd"


@functools.cache
def dpi_schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(SCHEMA))


def schema_errors(xml: bytes) -> list[str]:
    """Every error the schema finds, as `line N: message`; empty when the document is valid."""
    schema = dpi_schema()
    schema.validate(etree.fromstring(xml))
    return [f"line {error.line}: {error.message}" for error in schema.error_log]
