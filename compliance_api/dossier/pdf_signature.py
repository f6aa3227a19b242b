"""The dossier PDF signed as a PDF: a PAdES signature over the whole file, with pyHanko.

Typst writes the PDF (PDF/A-3u, the JWS attached as `dossier.jws`); pyHanko appends an incremental update holding
an invisible signature field (printable, as PDF/A asks) and a CMS signature (ECDSA P-256, SHA-256) over every byte
before and after the signature value: the pages, the attachment and the metadata. pyHanko updates the XMP metadata
with the Info dictionary, so the file stays PDF/A-3. A PDF reader shows the document as certified by the operator's
certificate (no change allowed after it); a changed byte breaks it.
"""

from __future__ import annotations

import io
import warnings
from functools import lru_cache

from cryptography.utils import CryptographyDeprecationWarning

# pyHanko imports cryptography's DSA key types, which cryptography 51 deprecates: without this, every server start and
# command would print the warning. The dossiers sign with ECDSA; only this import's warning is silenced.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="DSA is deprecated", category=CryptographyDeprecationWarning)
    from pyhanko.keys import load_certs_from_pemder_data, load_private_key_from_pemder_data
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import fields, signers
    from pyhanko.sign.signers.pdf_signer import PdfSignatureMetadata
    from pyhanko_certvalidator.registry import SimpleCertificateStore

from compliance_api.passport.certificates import PdfSigningKey

FIELD = "DossierSignature"
RESERVED_HEX_DIGITS = 6144
"""Room for the CMS signature, in hex digits (two a byte): with its certificate and signed attributes it takes about
1,700 bytes, a little more with a long operator name; pyHanko's own estimate would sign once more to find out."""


@lru_cache(maxsize=8)
def _signer(key_pem: bytes, certificate_pem: bytes) -> signers.SimpleSigner:
    """pyHanko's signer for a key (once per process and key: parsing it costs more than a signature)."""
    [certificate] = load_certs_from_pemder_data(certificate_pem)
    return signers.SimpleSigner(
        signing_cert=certificate,
        signing_key=load_private_key_from_pemder_data(key_pem, passphrase=None),
        cert_registry=SimpleCertificateStore(),  # type: ignore[no-untyped-call]  # self-issued: no chain to add
    )


def _pdf_signer(key: PdfSigningKey, reason: str) -> signers.PdfSigner:
    metadata = PdfSignatureMetadata(
        field_name=FIELD,
        md_algorithm="sha256",
        subfilter=fields.SigSeedSubFilter.PADES,
        reason=reason,
        certify=True,
        docmdp_permissions=fields.MDPPerm.NO_CHANGES,
    )
    return signers.PdfSigner(metadata, signer=_signer(key.key_pem, key.certificate_pem))


def sign_pdf(pdf: bytes, key: PdfSigningKey, reason: str) -> bytes:
    """`pdf` with a certifying PAdES signature over all of it, by `key`; `reason` shows in the reader. Not on a
    running event loop (pyHanko runs one of its own): use `sign_pdf_on_loop` there."""
    out = io.BytesIO()
    _pdf_signer(key, reason).sign_pdf(
        IncrementalPdfFileWriter(io.BytesIO(pdf)), bytes_reserved=RESERVED_HEX_DIGITS, output=out
    )
    return out.getvalue()


async def sign_pdf_on_loop(pdf: bytes, key: PdfSigningKey, reason: str) -> bytes:
    """`sign_pdf` on the running event loop (about 10 ms of CPU it holds the loop for)."""
    out = io.BytesIO()
    await _pdf_signer(key, reason).async_sign_pdf(
        IncrementalPdfFileWriter(io.BytesIO(pdf)), bytes_reserved=RESERVED_HEX_DIGITS, output=out
    )
    return out.getvalue()
