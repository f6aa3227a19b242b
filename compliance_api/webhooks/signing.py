"""Secrets and signatures: `whsec_` secrets sealed at rest with AES-GCM, deliveries signed per Standard Webhooks.

A signing secret must be usable for HMAC, so it cannot be stored as a hash: it is encrypted with AES-256-GCM under a
key derived (HKDF-SHA256) from `COMPLIANCE_SECRET_KEY`, with the endpoint id as associated data, so a sealed secret
copied onto another row does not open.
"""

from __future__ import annotations

import base64
import os
import secrets
import uuid
from collections.abc import Iterable
from datetime import datetime

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from standardwebhooks.webhooks import Webhook

SECRET_PREFIX = "whsec_"  # noqa: S105 (a prefix, not a secret)
SECRET_BYTES = 32
NONCE_BYTES = 12


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


class SecretBox:
    """Seals and opens endpoint secrets with a key derived from the server secret."""

    def __init__(self, server_secret: bytes) -> None:
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"compliance-api webhook secrets v1").derive(
            server_secret
        )
        self._aead = AESGCM(key)

    def seal(self, secret: str, endpoint_id: uuid.UUID) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, secret.encode(), endpoint_id.bytes)

    def open(self, sealed: bytes, endpoint_id: uuid.UUID) -> str:
        return self._aead.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], endpoint_id.bytes).decode()


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
