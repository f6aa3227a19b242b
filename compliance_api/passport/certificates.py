"""The keys that sign dossier PDFs: an ECDSA P-256 key and a self-issued X.509 certificate per passport key number.

A PDF signature (PAdES) needs a certificate, and PDF readers validate ECDSA P-256 and RSA but rarely Ed25519, the
passport keys' type. So each passport key `<NNNN>.jwk.json` has a companion `<NNNN>.pdf-signer.pem` (the PKCS#8 key,
then the certificate), written once beside it, owner-only like the JWK, and never changed. The certificate names the
operator (`COMPLIANCE_OPERATOR_NAME`) and the environment; it is its own issuer, so an auditor trusts it by comparing
its SHA-256 fingerprint with the one the operator publishes (`/.well-known/dossier-certificates.pem`).
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from compliance_api.kit.environment import Environment

SUFFIX = ".pdf-signer.pem"
VALID_FOR = dt.timedelta(days=30 * 366)
"""A self-issued certificate cannot be renewed without a new key, and dossiers are kept for years (up to
COMPLIANCE_CLASSIFICATION_RETENTION_YEARS) and checked long after: it is valid for 30 years, and rotated (a new key
and certificate) with the passport key, not when it expires."""


def environment_label(environment: Environment) -> str:
    return "production" if environment is Environment.live else "sandbox"


@dataclass(frozen=True, slots=True)
class PdfSigningKey:
    """One key with its certificate, as PEM (what crosses to a process that renders PDFs)."""

    number: int
    key_pem: bytes
    certificate_pem: bytes

    @property
    def certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.certificate_pem)

    @property
    def fingerprint(self) -> str:
        """The certificate's SHA-256 fingerprint, in lower-case hex (what `openssl x509 -fingerprint` prints)."""
        return self.certificate.fingerprint(hashes.SHA256()).hex()


def _subject(environment: Environment, operator: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(
                NameOID.COMMON_NAME, f"{operator} classification dossiers ({environment_label(environment)})"
            ),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, operator),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, f"compliance-api {environment.value}"),
        ]
    )


def _usage() -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=True,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=False,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )


def new_pdf_signer(environment: Environment, operator: str, now: dt.datetime) -> bytes:
    """A fresh P-256 key and its self-issued certificate, as one PEM file (key first)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = _subject(environment, operator)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))  # a clock a little behind still finds it valid
        .not_valid_after(now + VALID_FOR)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return key_pem + certificate.public_bytes(serialization.Encoding.PEM)


def write_pdf_signer(folder: Path, number: int, environment: Environment, operator: str) -> Path:
    """Write the companion of passport key `number` (FileExistsError if it has one), complete or not at all."""
    target = folder / f"{number:04d}{SUFFIX}"
    draft = folder / f".{number:04d}{SUFFIX}.{os.getpid()}.tmp"
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(new_pdf_signer(environment, operator, dt.datetime.now(dt.UTC)))
    try:  # a hard link appears complete or not at all, and fails if another process wrote it first
        os.link(draft, target)
    finally:
        draft.unlink()
    return target


def read_pdf_signer(path: Path) -> PdfSigningKey:
    text = path.read_bytes()
    marker = b"-----BEGIN CERTIFICATE-----"
    split = text.index(marker)
    return PdfSigningKey(int(path.name.split(".")[0]), text[:split], text[split:])


def number_of(path: Path) -> int:
    return int(path.name.split(".")[0])


def published_pem(keys: tuple[PdfSigningKey, ...]) -> bytes:
    """The certificates as one PEM file, each after a line saying what it is (PEM readers skip text between)."""
    parts = []
    for key in keys:
        certificate = key.certificate
        subject = certificate.subject.rfc4514_string()
        valid = f"{certificate.not_valid_before_utc:%Y-%m-%d} to {certificate.not_valid_after_utc:%Y-%m-%d}"
        parts.append(f"Key {key.number:04d}: {subject}; SHA-256 {key.fingerprint}; valid {valid}\n".encode())
        parts.append(key.certificate_pem)
    return b"".join(parts)
