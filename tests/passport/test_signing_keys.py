"""The key folder is listed again only when it changed: a rotation is still seen on the next call, also when it
lands in the same tick of the file-time clock as the previous listing. Each key has a PDF signing key and
certificate, rotated with it."""

from __future__ import annotations

import datetime as dt
import os
import stat
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from compliance_api.kit.environment import Environment
from compliance_api.passport.certificates import SUFFIX
from compliance_api.passport.signing import NoPdfSigner, SigningKeys, add_key

LIVE = Environment.live


def set_mtime(folder: Path, ns: int) -> None:
    os.utime(folder, ns=(ns, ns))


def test_a_rotation_after_a_trusted_listing_is_seen(tmp_path: Path) -> None:
    add_key(tmp_path, LIVE)
    set_mtime(tmp_path / "live", time.time_ns() - 60 * 10**9)  # the folder has been still for a minute
    keys = SigningKeys(tmp_path, generate=False)
    first = keys.signing_key(LIVE)
    assert keys.signing_key(LIVE) is first
    new_kid = add_key(tmp_path, LIVE)
    assert keys.signing_key(LIVE).kid == new_kid
    assert [key.kid for key in keys.keys(LIVE)] == [first.kid, new_kid]


def test_a_rotation_in_the_same_clock_tick_as_the_listing_is_seen(tmp_path: Path) -> None:
    add_key(tmp_path, LIVE)
    folder = tmp_path / "live"
    tick = time.time_ns()
    set_mtime(folder, tick)
    keys = SigningKeys(tmp_path, generate=False)
    first = keys.signing_key(LIVE)
    new_kid = add_key(tmp_path, LIVE)
    set_mtime(folder, tick)  # a coarse clock gives the change the listing's time stamp
    assert keys.signing_key(LIVE).kid == new_kid != first.kid


def test_each_key_has_a_pdf_signing_certificate_that_rotates_with_it_and_stays_published(tmp_path: Path) -> None:
    add_key(tmp_path, LIVE, "Example Payroll B.V.")
    keys = SigningKeys(tmp_path, generate=False)
    first = keys.pdf_signer(LIVE)
    certificate = first.certificate
    assert certificate.issuer == certificate.subject, "self-issued"
    assert "O=Example Payroll B.V." in certificate.subject.rfc4514_string()
    assert "production" in certificate.subject.rfc4514_string()
    public = certificate.public_key()
    assert isinstance(public, ec.EllipticCurvePublicKey)
    assert public.curve.name == "secp256r1", "a key type PDF readers validate"
    assert certificate.not_valid_after_utc - certificate.not_valid_before_utc > dt.timedelta(days=365 * 29)
    assert stat.S_IMODE((tmp_path / "live" / f"0001{SUFFIX}").stat().st_mode) == 0o600, "owner-only, as the JWK"

    add_key(tmp_path, LIVE, "Example Payroll B.V.")
    second = keys.pdf_signer(LIVE)
    assert (second.number, second.fingerprint != first.fingerprint) == (2, True)
    assert [key.fingerprint for key in keys.pdf_certificates(LIVE)] == [first.fingerprint, second.fingerprint]


def test_a_key_from_before_pdf_signing_gets_its_certificate_in_embedded_mode_and_is_named_in_production(
    tmp_path: Path,
) -> None:
    add_key(tmp_path, LIVE)
    (tmp_path / "live" / f"0001{SUFFIX}").unlink()  # as a key folder made before PDFs were signed

    with pytest.raises(NoPdfSigner, match=r"0001.*keys rotate"):
        SigningKeys(tmp_path, generate=False).pdf_signer(LIVE)

    assert SigningKeys(tmp_path, generate=True).pdf_signer(LIVE).number == 1
