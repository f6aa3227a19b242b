"""The schema harness itself: the OECD schema loads, accepts a minimal DAC7 message and names what is missing."""

from __future__ import annotations

from tests.dac7.dpi_schema import schema_errors

MINIMAL = b"""<?xml version="1.0" encoding="utf-8"?>
<dpi:DPI_OECD xmlns:dpi="urn:oecd:ties:dpi:v1" xmlns:stf="urn:oecd:ties:dpistf:v1" version="1.0">
  <dpi:MessageSpec>
    <dpi:TransmittingCountry>NL</dpi:TransmittingCountry>
    <dpi:ReceivingCountry>NL</dpi:ReceivingCountry>
    <dpi:MessageType>DAC7</dpi:MessageType>
    <dpi:MessageRefId>NL2025-1</dpi:MessageRefId>
    <dpi:MessageTypeIndic>DPI403</dpi:MessageTypeIndic>
    <dpi:ReportingPeriod>2025-12-31</dpi:ReportingPeriod>
    <dpi:Timestamp>2026-01-10T09:00:00</dpi:Timestamp>
  </dpi:MessageSpec>
  <dpi:DPIBody>
    <dpi:PlatformOperator>
      <dpi:TIN issuedBy="NL">123456789</dpi:TIN>
      <dpi:Name>Platform B.V.</dpi:Name>
      <dpi:Address>
        <dpi:CountryCode>NL</dpi:CountryCode><dpi:AddressFree>Damrak 1, Amsterdam</dpi:AddressFree>
      </dpi:Address>
      <dpi:DocSpec><stf:DocTypeIndic>OECD1</stf:DocTypeIndic><stf:DocRefId>NL2025-2</stf:DocRefId></dpi:DocSpec>
    </dpi:PlatformOperator>
  </dpi:DPIBody>
</dpi:DPI_OECD>
"""


def test_a_minimal_dac7_message_validates() -> None:
    assert schema_errors(MINIMAL) == []


def test_a_missing_element_and_a_wrong_message_type_are_named() -> None:
    start, end = MINIMAL.index(b"<dpi:Address>"), MINIMAL.index(b"</dpi:Address>") + len(b"</dpi:Address>")
    broken = (MINIMAL[:start] + MINIMAL[end:]).replace(b">DAC7<", b">DAC8<")
    errors = schema_errors(broken)
    assert any("MessageType" in e and "DAC8" in e for e in errors), errors
    assert any("Address" in e for e in errors), errors
