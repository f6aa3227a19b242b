"""The delivery worker: runs the steps of `delivery.py` (dispatch, claim, send, record) until stopped.

`Worker.run` keeps `COMPLIANCE_WEBHOOKS_CONCURRENCY` senders busy from a small queue of claimed deliveries and
records finished attempts in batches, so a receiver that hangs (up to the 15 s timeout) holds one sender only. While
the database is unreachable the feeder waits 0.5 s, 1 s, 2 s … up to 30 s between claims and logs the outage once.
`Worker.run_once` (tests, `worker --once`) does one dispatch-claim-send-record round of up to
`COMPLIANCE_WEBHOOKS_BATCH_SIZE` deliveries.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.outage import DatabaseOutage, is_database_unreachable
from compliance_api.metrics import WEBHOOK_ATTEMPTS, WEBHOOK_LATENCY
from compliance_api.webhooks.delivery import Job, Outcome, Sender, claim, dispatch, record
from compliance_api.webhooks.signing import SecretBox

log = structlog.get_logger("compliance_api.webhooks")


class Worker:
    """One delivery worker; `run_once` does one dispatch-claim-send-record round, `run` loops until stopped."""

    def __init__(
        self,
        settings: Settings,
        sessionmaker: async_sessionmaker[AsyncSession],
        box: SecretBox,
        sender: Sender | None = None,
    ) -> None:
        self.settings = settings
        self.sessionmaker = sessionmaker
        self.box = box
        self.sender = sender or Sender(settings)
        self.rng = random.Random()  # noqa: S311 (jitter, not a secret)
        self._next_dispatch = 0.0
        self.outage = DatabaseOutage("webhook_worker")

    async def run_once(self) -> int:
        """Dispatch pending events, then deliver one batch of due deliveries; returns the number of attempts."""
        jobs = await self._claim_batch(self.settings.webhooks_batch_size, always_dispatch=True)
        if not jobs:
            return 0
        limit = asyncio.Semaphore(self.settings.webhooks_concurrency)

        async def send(job: Job) -> Outcome:
            async with limit:
                return await self.sender.send(job)

        outcomes = await asyncio.gather(*(send(job) for job in jobs))
        await self._record(list(zip(jobs, outcomes, strict=True)))
        return len(jobs)

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver until `stop` is set: a feeder claims small batches into a queue, `concurrency` senders take from
        it, a recorder writes finished attempts in batches. A hanging receiver holds one sender, not the others."""
        await _Pipeline(self, stop).run()

    async def _claim_batch(self, size: int, *, always_dispatch: bool = False) -> list[Job]:
        """Dispatch (at most once per poll interval while the outbox is empty), then claim up to `size`."""
        if always_dispatch or time.monotonic() >= self._next_dispatch:
            async with self.sessionmaker.begin() as session:
                found = await dispatch(session, batch=self.settings.webhooks_batch_size * 5, now=utcnow())
            self._next_dispatch = 0.0 if found else time.monotonic() + self.settings.webhooks_poll_seconds
        async with self.sessionmaker.begin() as session:
            lease = timedelta(seconds=self.settings.webhooks_lease_seconds)
            return await claim(session, batch=size, now=utcnow(), box=self.box, lease=lease)

    async def _record(self, results: list[tuple[Job, Outcome]]) -> None:
        for _, outcome in results:
            WEBHOOK_ATTEMPTS.labels(outcome.kind).inc()
            if outcome.latency_ms is not None:
                WEBHOOK_LATENCY.observe(outcome.latency_ms / 1000)
        async with self.sessionmaker.begin() as session:
            await record(session, results, now=utcnow(), rng=self.rng)

    async def close(self) -> None:
        await self.sender.close()


class _Pipeline:
    """The state of one `Worker.run`: a queue of claimed jobs, the senders, and finished attempts to record.

    The feeder claims at most three times the concurrency at a time and only when the queue runs low, so a claimed job
    waits for a sender at most a few request timeouts, well inside its lease. On stop, queued jobs are dropped
    unsent (their leases end and they are claimed again), attempts in flight finish and are recorded."""

    def __init__(self, worker: Worker, stop: asyncio.Event) -> None:
        self.worker = worker
        self.stop = stop
        self.concurrency = worker.settings.webhooks_concurrency
        self.queue: asyncio.Queue[Job | None] = asyncio.Queue()
        self.low = asyncio.Event()
        self.finished: list[tuple[Job, Outcome]] = []
        self.ready = asyncio.Event()
        self.sending = True

    async def run(self) -> None:
        senders = [asyncio.create_task(self._send()) for _ in range(self.concurrency)]
        recorder = asyncio.create_task(self._recorder())
        await self._feed()
        while not self.queue.empty():
            self.queue.get_nowait()
        for _ in senders:
            self.queue.put_nowait(None)
        await asyncio.gather(*senders)
        self.sending = False
        self.ready.set()
        await recorder

    async def _feed(self) -> None:
        while not self.stop.is_set():
            if self.queue.qsize() >= self.concurrency:
                self.low.clear()
                await _first(self.low.wait(), self.stop.wait())
                continue
            wait = await self.feed_once()
            if wait:
                await _first(self.stop.wait(), asyncio.sleep(wait))

    async def feed_once(self) -> float:
        """Claim one batch into the queue; the seconds to wait before the next claim (0: claim again at once).

        The loop must outlive any failure: a lost database waits longer and longer (`DatabaseOutage`, one log line
        when it goes and one when it is back), anything else is logged and retried after the poll interval."""
        poll = self.worker.settings.webhooks_poll_seconds
        try:
            jobs = await self.worker._claim_batch(min(self.worker.settings.webhooks_batch_size, 3 * self.concurrency))
        except Exception as exc:
            if is_database_unreachable(exc):
                return max(poll, self.worker.outage.failed(exc))
            log.exception("webhook_worker_claim_failed")
            return poll
        self.worker.outage.succeeded()
        for job in jobs:
            self.queue.put_nowait(job)
        return 0.0 if jobs else poll

    async def _send(self) -> None:
        while (job := await self.queue.get()) is not None:
            if self.queue.qsize() < self.concurrency:
                self.low.set()
            try:
                outcome = await self.worker.sender.send(job)
            except Exception:  # a bug must not take a sender down: the attempt counts as failed
                log.exception("webhook_send_failed", delivery_id=str(job.delivery_id))
                outcome = Outcome(None, 0, "internal error while sending", None)
            self.finished.append((job, outcome))
            self.ready.set()

    async def _recorder(self) -> None:
        while self.sending or self.finished:
            await self.ready.wait()
            self.ready.clear()
            taken, self.finished = self.finished, []
            if taken:
                try:
                    await self.worker._record(taken)
                except Exception as exc:  # unrecorded attempts are sent again when their leases end
                    if not is_database_unreachable(exc):
                        log.exception("webhook_worker_record_failed")
                    elif not self.worker.outage.unreachable:
                        self.worker.outage.failed(exc)


async def _first(*waits: Coroutine[Any, Any, Any]) -> None:
    """Wait until the first of `waits` finishes; cancel the others."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
