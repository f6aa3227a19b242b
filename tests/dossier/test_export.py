"""The index's signature: the signing input is read from the spooled index a slice at a time, and is the same
bytes a JOSE library signs, however long the index (several slices, and a last one that needs padding)."""

from __future__ import annotations

import io
import os

import jwt
from joserfc.jwk import OKPKey

from compliance_api.dossier.export import _base64url, _ed25519, _signing_input


def test_an_index_of_many_slices_is_signed_over_its_exact_bytes() -> None:
    key = OKPKey.generate_key("Ed25519", parameters={"kid": "k1"}, private=True)
    index = os.urandom(3 * 2**16 * 2 + 7)  # two whole slices and a last one of 7 bytes (base64url pads those)

    signing_input = _signing_input(key, io.BytesIO(index))
    token = bytes(signing_input) + b"." + _base64url(_ed25519(key).sign(signing_input))

    public = _ed25519(key).public_key()  # PyJWT: joserfc refuses a payload over 128 KiB by default
    assert jwt.api_jws.decode(token, public, algorithms=["EdDSA"]) == index
