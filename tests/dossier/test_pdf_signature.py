"""The dossier PDF signed as a PDF: pyHanko finds one signature over the whole file, intact and valid, by the
certificate published beside the JWKS; the attached JWS is inside the signed bytes; PDF/A-3 is kept; a changed byte,
or another dossier's JWS moved in, breaks it; poppler's pdfsig, as a PDF reader, shows it signed."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path
from typing import Any

from asn1crypto import x509 as asn1_x509  # type: ignore[import-untyped]
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from httpx import AsyncClient
from pyhanko.keys import load_certs_from_pemder_data
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import async_validate_pdf_signature
from pyhanko.sign.validation.status import PdfSignatureStatus, SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext
from pypdf import PdfReader

from tests.classify.conftest import Account
from tests.conftest import require_program
from tests.dossier.conftest import attached_jws, verify_jws

ZW = "/v1/classify/zelfstandigenwet"
CERTIFICATES = "/.well-known/dossier-certificates.pem"


async def _pdf(client: AsyncClient, headers: dict[str, str], body: dict[str, Any]) -> bytes:
    made = await client.post(ZW, json={"engagement": {"hourly_rate_eur": 80}, **body}, headers=headers)
    assert made.status_code == 200, made.text
    answer = await client.get(f"/v1/classifications/{made.json()['id']}/dossier?format=pdf", headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.content


async def _status(pdf: bytes, trusted: list[asn1_x509.Certificate]) -> PdfSignatureStatus:
    [signature] = PdfFileReader(io.BytesIO(pdf)).embedded_signatures
    context = ValidationContext(trust_roots=trusted, allow_fetching=False)
    return await async_validate_pdf_signature(signature, context)


async def _published(client: AsyncClient) -> list[asn1_x509.Certificate]:
    answer = await client.get(CERTIFICATES)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/x-pem-file"
    found: list[asn1_x509.Certificate] = list(load_certs_from_pemder_data(answer.content))
    return found


async def test_the_pdf_is_signed_whole_by_the_published_certificate_and_keeps_pdf_a_3_and_its_jws(
    client: AsyncClient, account: Account
) -> None:
    pdf = await _pdf(client, account.live, {"reference": "signed as a PDF"})
    published = await _published(client)

    status = await _status(pdf, published)
    assert (status.intact, status.valid, status.trusted) == (True, True, True), _details(status)
    assert status.coverage is SignatureCoverageLevel.ENTIRE_FILE, "pages, attachment and metadata: every byte"
    assert status.signing_cert.dump() == published[-1].dump()
    assert status.md_algorithm == "sha256"
    subject = x509.load_der_x509_certificate(status.signing_cert.dump()).subject.rfc4514_string()
    assert "O=compliance-api" in subject, "the certificate says whose it is"
    assert "production" in subject

    reader = PdfReader(io.BytesIO(pdf))
    xmp = reader.xmp_metadata
    assert xmp is not None
    assert 'pdfaid:part="3"' in xmp.stream.get_data().decode(), "still PDF/A-3 after signing"
    signed = await verify_jws(client, attached_jws(pdf))
    assert signed["reference"] == "signed as a PDF"
    fingerprint = x509.load_der_x509_certificate(status.signing_cert.dump()).fingerprint(hashes.SHA256()).hex()
    assert signed["verification"]["pdf_certificate_sha256"] == fingerprint, "the signed facts name the PDF's signer"
    assert signed["verification"]["pdf_certificates_url"] == "http://api.test" + CERTIFICATES

    unknown = await _status(pdf, [])
    assert (unknown.intact, unknown.valid, unknown.trusted) == (True, True, False), "self-issued: validity unknown"


async def test_a_changed_byte_or_another_dossier_s_jws_breaks_the_pdf_signature(
    client: AsyncClient, account: Account
) -> None:
    german = await _pdf(client, {**account.live, "Accept-Language": "de"}, {"reference": "German pages"})
    dutch = await _pdf(client, {**account.live, "Accept-Language": "nl"}, {"reference": "Dutch courier"})
    published = await _published(client)

    page_text = german.index(b"stream", german.index(b"/Contents")) + 20  # a byte inside a page's content stream
    changed = bytearray(german)
    changed[page_text] ^= 0x01
    assert not (await _status(bytes(changed), published)).intact

    swapped = _move_jws(german, attached_jws(dutch))  # the Dutch courier's JWS moved into the German PDF
    assert attached_jws(swapped) == attached_jws(dutch)
    status = await _status(swapped, published)
    assert status.coverage is SignatureCoverageLevel.ENTIRE_REVISION, "the signature no longer covers the file"
    assert not status.bottom_line, _details(status)


def _pdfsig(pdf: bytes, folder: Path) -> str:
    """What poppler's `pdfsig` (the signature panel of Evince, Okular and other poppler readers) says of `pdf`."""
    require_program("/usr/bin/pdfsig", "apt-get install poppler-utils")
    path = folder / "dossier.pdf"
    path.write_bytes(pdf)
    done = subprocess.run(["/usr/bin/pdfsig", str(path)], capture_output=True, timeout=60, check=False)
    return (done.stdout + done.stderr).decode()


async def test_a_pdf_reader_shows_the_dossier_signed_whole_and_a_changed_page_as_broken(
    client: AsyncClient, account: Account, tmp_path: Path
) -> None:
    pdf = await _pdf(client, account.live, {"reference": "seen in a reader"})
    shown = _pdfsig(pdf, tmp_path)
    assert "Signature #1" in shown, shown
    assert "Total document signed" in shown, shown
    assert "Signature Validation: Signature is Valid." in shown, shown

    changed = bytearray(pdf)
    changed[pdf.index(b"stream", pdf.index(b"/Contents")) + 20] ^= 0x01  # a byte inside a page's content stream
    broken = _pdfsig(bytes(changed), tmp_path)
    assert "Signature is Valid." not in broken, broken
    assert "Digest Mismatch" in broken, broken


def _move_jws(pdf: bytes, jws: str) -> bytes:
    """`pdf` with its attachment replaced by `jws`, saved as an incremental update (as a forger would)."""
    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    specification = writer.root["/Names"]["/EmbeddedFiles"]["/Names"][1]
    embedded = generic.StreamObject(
        {generic.NameObject("/Type"): generic.NameObject("/EmbeddedFile")}, stream_data=jws.encode()
    )
    reference = writer.add_object(embedded)
    specification["/EF"] = generic.DictionaryObject({generic.NameObject("/F"): reference})  # type: ignore[no-untyped-call]
    writer.update_container(specification)
    out = io.BytesIO()
    writer.write(out)  # type: ignore[no-untyped-call]
    return out.getvalue()


def _details(status: PdfSignatureStatus) -> str:
    details: str = status.pretty_print_details()  # type: ignore[no-untyped-call]
    return details


async def test_production_and_the_sandbox_publish_their_own_certificates_beside_their_keys(
    client: AsyncClient, sandbox_client: AsyncClient, account: Account
) -> None:
    production, sandbox = await _published(client), await _published(sandbox_client)
    assert [c.sha256 for c in production] != [c.sha256 for c in sandbox]
    text = (await client.get(CERTIFICATES)).text
    fingerprint = x509.load_der_x509_certificate(production[-1].dump()).fingerprint(hashes.SHA256()).hex()
    assert f"SHA-256 {fingerprint}" in text, "each certificate is named with its fingerprint"

    pdf = await _pdf(sandbox_client, account.test, {"reference": "sandbox"})
    assert (await _status(pdf, sandbox)).trusted
    assert not (await _status(pdf, production)).trusted
