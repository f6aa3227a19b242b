"""Secrets and signatures: `whsec_` secrets sealed at rest with AES-GCM, deliveries signed per Standard Webhooks.

A signing secret must be usable for HMAC, so it cannot be stored as a hash: it is encrypted with AES-256-GCM under a
key derived (HKDF-SHA256) from `COMPLIANCE_SECRET_KEY`, with the endpoint id as associated data, so a sealed secret
copied onto another row does not open. During a rotation of `COMPLIANCE_SECRET_KEY` (`COMPLIANCE_SECRET_KEY_PREVIOUS`
set) secrets sealed under the retired key still open, and `compliance-api webhooks reseal` seals every endpoint's
secrets under the current key before the retired one is removed.
"""

from __future__ import annotations

import base64
import os
import secrets
import uuid
from collections.abc import Iterable
from datetime import datetime

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from standardwebhooks.webhooks import Webhook

from compliance_api.config import Settings

SECRET_PREFIX = "whsec_"  # noqa: S105 (a prefix, not a secret)
SECRET_BYTES = 32
NONCE_BYTES = 12


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _aead(server_secret: bytes) -> AESGCM:
    info = b"compliance-api webhook secrets v1"
    return AESGCM(HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(server_secret))


class SecretBox:
    """Seals endpoint secrets with a key derived from the server secret; opens them with it or a retired one."""

    def __init__(self, server_secret: bytes, *retired_secrets: bytes) -> None:
        self._aead = _aead(server_secret)
        self._retired = tuple(_aead(secret) for secret in retired_secrets)

    def seal(self, secret: str, endpoint_id: uuid.UUID) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, secret.encode(), endpoint_id.bytes)

    def open(self, sealed: bytes, endpoint_id: uuid.UUID) -> str:
        """The secret; raises `InvalidTag` when no key in use or retired opens it (or it belongs to another row)."""
        nonce, box = sealed[:NONCE_BYTES], sealed[NONCE_BYTES:]
        for aead in (self._aead, *self._retired):
            try:
                return aead.decrypt(nonce, box, endpoint_id.bytes).decode()
            except InvalidTag:
                continue
        raise InvalidTag

    def reseal(self, sealed: bytes, endpoint_id: uuid.UUID) -> bytes:
        """The same secret sealed under the current key."""
        return self.seal(self.open(sealed, endpoint_id), endpoint_id)


def secret_box(settings: Settings) -> SecretBox:
    """The box for these settings: the current secret, plus the retired one while a rotation is in progress."""
    current, *retired = settings.secret_keys()
    return SecretBox(current, *retired)


def signature_header(secrets_in_use: Iterable[str], msg_id: str, timestamp: datetime, body: str) -> str:
    """`webhook-signature`: one `v1,<base64>` per secret in use (two during a rotation), space-separated."""
    return " ".join(Webhook(secret).sign(msg_id, timestamp, body) for secret in secrets_in_use)


def headers(secrets_in_use: Iterable[str], msg_id: str, timestamp: datetime, body: str) -> dict[str, str]:
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": signature_header(secrets_in_use, msg_id, timestamp, body),
        "content-type": "application/json",
    }
