"""DAC7 identities sealed at rest: AES-256-GCM under a key derived (HKDF-SHA256) from `COMPLIANCE_SECRET_KEY`.

Dates of birth, TINs, addresses and IBANs are personal data: each seller's identity document is encrypted with the
seller row's id as associated data, so a sealed identity copied onto another row does not open. A rotation works as
for webhook secrets: with `COMPLIANCE_SECRET_KEY_PREVIOUS` set to the retired secret, identities sealed under it still
open, and `compliance-api dac7 reseal` seals every identity under the current key before the retired one is removed.
"""

from __future__ import annotations

import os
import uuid

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from compliance_api.config import Settings
from compliance_api.dac7.identity import SEALED, SellerIdentity

NONCE_BYTES = 12


class IdentityUnreadable(ValueError):
    """No configured key opens a sealed identity: sealed under a secret that is neither `COMPLIANCE_SECRET_KEY` nor
    `COMPLIANCE_SECRET_KEY_PREVIOUS` (a rotation finished before `dac7 reseal` ran), or copied from another row."""

    def __init__(self, seller_id: uuid.UUID) -> None:
        super().__init__(
            f"the DAC7 identity of seller {seller_id} opens under no configured key: set the secret it was sealed "
            "under as COMPLIANCE_SECRET_KEY_PREVIOUS and run `compliance-api dac7 reseal`"
        )


def _derive(server_secret: bytes, purpose: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose).derive(server_secret)


class IdentityBox:
    """Seals identities under the current key; opens them with it or a retired one."""

    def __init__(self, server_secret: bytes, *retired_secrets: bytes) -> None:
        self._aead = AESGCM(_derive(server_secret, b"compliance-api dac7 identities v1"))
        self._retired = tuple(AESGCM(_derive(s, b"compliance-api dac7 identities v1")) for s in retired_secrets)

    def seal(self, identity: SellerIdentity, seller_id: uuid.UUID) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, identity.model_dump_json().encode(), seller_id.bytes)

    def open(self, sealed: bytes, seller_id: uuid.UUID) -> SellerIdentity:
        """The identity; raises `IdentityUnreadable` when no key in use or retired opens it (or it is another row's)."""
        nonce, box = sealed[:NONCE_BYTES], sealed[NONCE_BYTES:]
        for aead in (self._aead, *self._retired):
            try:
                return SellerIdentity.model_validate_json(aead.decrypt(nonce, box, seller_id.bytes), context=SEALED)
            except InvalidTag:
                continue
        raise IdentityUnreadable(seller_id)

    def reseal(self, sealed: bytes, seller_id: uuid.UUID) -> bytes:
        return self.seal(self.open(sealed, seller_id), seller_id)


def identity_box(settings: Settings) -> IdentityBox:
    current, *retired = settings.secret_keys()
    return IdentityBox(current, *retired)
