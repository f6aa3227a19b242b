"""`Idempotency-Key` for POSTs that create something (docs/integrate/idempotency.md), reusable by any endpoint.

Usage in an endpoint (the key comes from an `IdempotencyKey` header parameter; the app's `Idempotency` from
`idempotency/dependencies.py`):

    return await idempotency_of(request).answer(caller, session, key, fingerprint("POST", path, body),
                                                lambda: service.create(...), status_code=201)

- A key is claimed per (user, environment, key) in its own short transaction, committed before the work starts,
  so a concurrent duplicate sees the claim and gets 409 `idempotency_in_progress`.
- The response is stored in the request's own transaction, so it is kept exactly when the created thing is.
  A request that fails (any exception: 4xx or 5xx) releases the claim, so the key can be retried.
- A retry with the same body replays the stored status and body with `Idempotent-Replayed: true`; a different
  body is 409 `idempotency_mismatch`.
- Records live 24 hours. Expired records are ignored on read and taken over by a new request with the same key;
  `compliance-api idempotency purge` deletes them (run it daily). A claim whose request died without finishing
  (process killed) is abandoned after `CLAIM_LEASE` and can be taken over too.
- Responses can hold secrets shown once (a share-token), so the key is stored only as a keyed hash and the
  response is encrypted (AES-GCM) under a key derived from the Idempotency-Key itself: a leaked database, even
  with the pepper, does not reveal a stored response without the client's key.
- An endpoint whose answer is mostly rows it stores anyway (verdicts) passes a `Compaction`: the record then keeps a
  reference to those rows (marked by a leading NUL byte, which no JSON body starts with) and a replay rebuilds the
  answer from them, byte for byte, instead of keeping a second copy.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

import orjson
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from fastapi import Header, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.auth.caller import Caller
from compliance_api.errors import ApiError, FieldError
from compliance_api.idempotency import queries
from compliance_api.idempotency.models import IdempotencyRecord
from compliance_api.kit.clock import utcnow
from compliance_api.kit.patterns import described

RETENTION = dt.timedelta(hours=24)
CLAIM_LEASE = dt.timedelta(minutes=5)
MAX_KEY_LENGTH = 255
KEY_PATTERN = described(r"^[ -~]+$", "printable ASCII characters")
REPLAYED_HEADER = "Idempotent-Replayed"

KEY_DESCRIPTION = (
    "Up to 255 printable ASCII characters, e.g. a UUID; a retry with the same key and body replays "
    "the first result for 24 hours; the same key with another body is 409 `idempotency_mismatch`."
)

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=MAX_KEY_LENGTH,
        pattern=KEY_PATTERN,
        description=KEY_DESCRIPTION,
    ),
]

IDEMPOTENCY_KEY_PARAMETER: dict[str, Any] = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": KEY_DESCRIPTION,
    "schema": {"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH, "pattern": KEY_PATTERN},
}
"""The header as a contract parameter, for routes that read it with `key_of` instead of an `IdempotencyKey`
parameter (a FastAPI parameter costs ~40 µs a request on the classify hot path; bench/RESULTS.md)."""


def key_of(request: Request) -> str | None:
    """The Idempotency-Key header, if sent (validated by `Idempotency.answer`)."""
    return request.headers.get("idempotency-key")


def fingerprint(method: str, path: str, body: BaseModel | None) -> str:
    """What makes two requests "the same": method, path and the parsed body (key order and spacing do not count).

    Written by the standard library, not orjson: a batch's items are any JSON, and only it writes integers beyond
    64 bits (orjson raises) and keeps `NaN` apart from `null` (orjson writes both as `null`)."""
    data = body.model_dump(mode="json") if body else None
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return hashlib.sha256(f"{method} {path} ".encode() + canonical).hexdigest()


def check_key(key: str) -> None:
    if not 1 <= len(key) <= MAX_KEY_LENGTH or not all(" " <= char <= "~" for char in key):
        message = "must be 1 to 255 printable ASCII characters"
        raise ApiError(
            "validation_failed", f"Idempotency-Key: {message}.", errors=[FieldError("header.Idempotency-Key", message)]
        )


def _derive(pepper: bytes, purpose: bytes, caller: Caller, key: str) -> bytes:
    scope = f"{caller.user_id}:{caller.environment}:{key}".encode()
    return hmac.new(pepper, purpose + scope, hashlib.sha256).digest()


def _seal(secret: bytes, status: int, body: bytes) -> bytes:
    nonce = os.urandom(12)
    return nonce + AESGCM(secret).encrypt(nonce, status.to_bytes(2, "big") + body, None)


def _open(secret: bytes, sealed: bytes) -> tuple[int, bytes]:
    plain = AESGCM(secret).decrypt(sealed[:12], sealed[12:], None)
    return int.from_bytes(plain[:2], "big"), plain[2:]


async def _claim(
    sessionmaker: async_sessionmaker[AsyncSession], caller: Caller, key_hash: str, fingerprint: str, now: dt.datetime
) -> IdempotencyRecord:
    """The stored record for this key (a finished one to replay), or a fresh claim committed for this request."""
    async with sessionmaker.begin() as session:
        existing = await queries.record_of(session, caller.user_id, caller.environment, key_hash)
        stale = existing is not None and (
            existing.expires_at <= now
            or (existing.response_status is None and existing.created_at + CLAIM_LEASE <= now)
        )
        if existing is not None and not stale:
            if not hmac.compare_digest(existing.fingerprint, fingerprint):
                raise ApiError("idempotency_mismatch")
            if existing.response_status is None:
                raise ApiError("idempotency_in_progress")
            return existing
        if existing is not None:
            await queries.remove(session, existing)
        claim = IdempotencyRecord(
            environment=caller.environment,
            user_id=caller.user_id,
            key_hash=key_hash,
            fingerprint=fingerprint,
            created_at=now,
            expires_at=now + RETENTION,
        )
        queries.add(session, claim)
    return claim


async def _release(sessionmaker: async_sessionmaker[AsyncSession], claim_id: uuid.UUID) -> None:
    async with sessionmaker.begin() as session:
        await queries.release(session, claim_id)


COMPACT = b"\x00"
"""Opens a stored answer kept as a `Compaction`'s reference instead of its bytes."""


class Compaction(Protocol):
    """How an endpoint keeps its answer in an idempotency record as a reference to rows it stored, and rebuilds it."""

    def compact(self, result: Any) -> bytes:
        """What to keep instead of the answer `result` (its JSON is `orjson.dumps(result)`)."""

    async def expand(self, session: AsyncSession, caller: Caller, compact: bytes) -> bytes:
        """The answer's JSON, byte for byte, from what `compact` kept."""


@dataclass(frozen=True, slots=True)
class Idempotency:
    """Idempotency-Key for one app: keys hashed, and answers sealed, under keys derived from the server pepper."""

    pepper: bytes
    sessionmaker: async_sessionmaker[AsyncSession]

    async def answer(
        self,
        caller: Caller,
        session: AsyncSession,
        key: str | None,
        request_fingerprint: str,
        run: Callable[[], Awaitable[object]],
        *,
        status_code: int = 200,
        compaction: Compaction | None = None,
    ) -> Response:
        """Run `run` once per Idempotency-Key and answer with its result as JSON; without a key, just run it. With a
        `compaction`, the record keeps its reference instead of the answer."""
        if key is None:
            return JSONResponse(_json_ready(await run()), status_code=status_code)
        check_key(key)
        key_hash = _derive(self.pepper, b"idempotency-key:", caller, key).hex()
        secret = _derive(self.pepper, b"idempotency-seal:", caller, key)
        try:
            record = await _claim(self.sessionmaker, caller, key_hash, request_fingerprint, utcnow())
        except IntegrityError:  # a concurrent duplicate inserted its claim between our read and our insert
            raise ApiError("idempotency_in_progress") from None
        if record.response_body is not None:
            status, body = _open(secret, record.response_body)
            if body.startswith(COMPACT) and compaction is not None:
                body = await compaction.expand(session, caller, body[len(COMPACT) :])
            return Response(body, status_code=status, media_type="application/json", headers={REPLAYED_HEADER: "true"})
        try:
            result = await run()
        except Exception:  # a cancelled request keeps its claim until CLAIM_LEASE runs out
            # The caller's transaction is undone anyway: roll it back first, so that its connection is given back
            # before the release takes one (holding one while waiting for another drains the pool under load).
            await session.rollback()
            await _release(self.sessionmaker, record.id)
            raise
        body = orjson.dumps(_json_ready(result))
        kept = body if compaction is None else COMPACT + compaction.compact(result)
        await queries.store_answer(session, record.id, status_code, _seal(secret, status_code, kept))
        return Response(body, status_code=status_code, media_type="application/json")


def _json_ready(result: object) -> object:
    """A response model, or a body its service shaped for orjson (JSON data, or dataclasses orjson writes)."""
    return result.model_dump(mode="json") if isinstance(result, BaseModel) else result


async def purge_expired(session: AsyncSession, now: dt.datetime) -> int:
    """Delete records past their 24 hours; returns how many."""
    return await queries.purge_expired(session, now)
