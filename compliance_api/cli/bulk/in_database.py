"""Batches classified in this installation's database, as the batch endpoints do (`classify.batch`), and kept under
the same Idempotency-Keys and fingerprints: a run over HTTP and one here with the same account and environment
replay each other's answered batches."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.auth.caller import Caller
from compliance_api.classify import batch as classify_batch
from compliance_api.classify.answers import VerdictReferences
from compliance_api.classify.language import DEFAULT_LANGUAGE
from compliance_api.classify.ruleset import Rulesets
from compliance_api.classify.schemas import BatchRequest, CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.classify.service import score_cross_border, score_engagement
from compliance_api.cli.bulk.rows import Batch, BulkEndpoint
from compliance_api.cli.bulk.runner import BulkAnswer
from compliance_api.idempotency.service import REPLAYED_HEADER, Idempotency, fingerprint
from compliance_api.kit.clock import utcnow
from compliance_api.kit.group_commit import GroupCommit

VERDICT_REFERENCES = VerdictReferences()


@dataclass(frozen=True, slots=True)
class DatabaseSender:
    caller: Caller
    audit: GroupCommit
    sessionmaker: async_sessionmaker[AsyncSession]
    idempotency: Idempotency
    rulesets: Rulesets
    base_url: str
    """Where the problems' `type` links point (`COMPLIANCE_PUBLIC_BASE_URL`)."""

    async def send(self, batch: Batch) -> BulkAnswer:
        """One transaction per batch: the Idempotency-Key's record is kept with the batch's verdicts."""
        body = BatchRequest(items=list(batch.bodies))
        async with self.sessionmaker.begin() as session:
            response = await self.idempotency.answer(
                self.caller,
                session,
                batch.key,
                fingerprint("POST", batch.endpoint.value, body),
                lambda: self._classify(batch.endpoint, body),
                compaction=VERDICT_REFERENCES,
            )
        return BulkAnswer(orjson.loads(response.body)["data"], replayed=response.headers.get(REPLAYED_HEADER) == "true")

    def _classify(self, endpoint: BulkEndpoint, body: BatchRequest) -> Awaitable[dict[str, Any]]:
        now, items = utcnow(), body.items
        args = (self.rulesets, now, DEFAULT_LANGUAGE, self.base_url)
        if endpoint is BulkEndpoint.dutch:
            return classify_batch.classify_batch(
                self.audit, self.caller, items, ZelfstandigenwetRequest, score_engagement, *args
            )
        return classify_batch.classify_batch(
            self.audit, self.caller, items, CrossBorderRequest, score_cross_border, *args
        )
