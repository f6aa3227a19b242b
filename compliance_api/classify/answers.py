"""Classify answers kept by an Idempotency-Key record as references to the verdicts the audit trail stores anyway.

A batch of 1000 answers about 8 MB; keeping it whole in the record doubled what a keyed request stored. The record
keeps the verdicts' ids and a batch's per-item problems, which are stored nowhere else: a batch's list compressed with
zlib, so that its problems' repeated texts cost next to nothing, each problem cut to fit 1 kB so compressed
(`batch.fits`). A replay reads the verdicts' stored bytes, which are the answer's own (`classify/compression.py`), and
joins them as `orjson` wrote the answer: compact JSON, so an item's bytes are the same inside the whole as alone.
"""

from __future__ import annotations

import uuid
import zlib
from typing import Any

import orjson
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.auth.caller import Caller
from compliance_api.classify import queries
from compliance_api.classify.compression import decompress
from compliance_api.classify.verdict_body import VerdictBody


class MissingVerdict(LookupError):
    """A referenced verdict is gone: it outlives the 24-hour record by retention, so this is a bug or tampering."""


def _reference(item: VerdictBody | dict[str, Any]) -> str | dict[str, Any]:
    """A batch item as the record keeps it: a verdict's id, or a problem (JSON data, naming the item's `index`)."""
    return item if isinstance(item, dict) else str(item.id)


class VerdictReferences:
    """`idempotency.Compaction` for a classify answer: one verdict, or a batch's `{"data": [...]}`."""

    def compact(self, result: VerdictBody | dict[str, Any]) -> bytes:
        if not isinstance(result, dict):
            return orjson.dumps({"verdict": str(result.id)})
        kept = orjson.dumps({"data": [_reference(item) for item in result["data"]]})
        return zlib.compress(kept)

    async def expand(self, session: AsyncSession, caller: Caller, compact: bytes) -> bytes:
        kept = orjson.loads(compact if compact.startswith(b"{") else zlib.decompress(compact))
        if "verdict" in kept:
            return (await _verdicts(session, caller, [kept["verdict"]]))[kept["verdict"]]
        items: list[str | dict[str, Any]] = kept["data"]
        stored = await _verdicts(session, caller, [item for item in items if isinstance(item, str)])
        parts = [stored[item] if isinstance(item, str) else orjson.dumps(item) for item in items]
        return b'{"data":[' + b",".join(parts) + b"]}"


async def _verdicts(session: AsyncSession, caller: Caller, ids: list[str]) -> dict[str, bytes]:
    """The caller's stored verdicts by id, as the bytes first answered.

    Selected by primary key alone, the owner checked on the rows found (`queries.stored_verdicts` says why)."""
    found: dict[str, bytes] = {}
    for start in range(0, len(ids), 500):  # bounded IN lists
        chunk = [uuid.UUID(value) for value in ids[start : start + 500]]
        found.update(
            {
                str(id): decompress(stored)
                for id, user_id, environment, stored in await queries.stored_verdicts(session, chunk)
                if user_id == caller.user_id and environment == caller.environment
            }
        )
    missing = set(ids) - set(found)
    if missing:
        raise MissingVerdict(f"{len(missing)} verdicts of an idempotent answer are gone, e.g. {min(missing)}")
    return found
