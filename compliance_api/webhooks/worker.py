"""The delivery worker: runs the steps of `delivery.py` (dispatch, claim, send, record) until stopped.

`Worker.run` keeps `COMPLIANCE_WEBHOOKS_CONCURRENCY` senders busy from a fair queue of claimed deliveries (in turn by
account, then endpoint; at most `COMPLIANCE_WEBHOOKS_ENDPOINT_CONCURRENCY` attempts to one endpoint at once; test
events first) and records finished attempts in batches, so a receiver that hangs (up to the 15 s timeout) holds a
few senders only, and one account's backlog does not hold up another's deliveries. While the database is
unreachable the feeder waits 0.5 s, 1 s, 2 s … up to 30 s between claims and logs the outage once.
`Worker.run_once` (tests, `worker --once`) does one dispatch-claim-send-record round of up to
`COMPLIANCE_WEBHOOKS_BATCH_SIZE` deliveries.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Callable, Coroutine
from datetime import timedelta
from typing import Any

import structlog
from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.db import asyncpg_dsn
from compliance_api.kit.clock import utcnow
from compliance_api.kit.fair_queue import FairQueue
from compliance_api.kit.outage import DatabaseOutage, is_database_unreachable
from compliance_api.kit.pg_listen import Follower, listen
from compliance_api.metrics import WEBHOOK_ATTEMPTS, WEBHOOK_LATENCY
from compliance_api.webhooks.delivery import TIMEOUT, DeliveryOutcome, Job, Room, Sender, claim, dispatch, record
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.wake import CHANNEL, waking

log = structlog.get_logger("compliance_api.webhooks")
LISTENER_NAME = "webhook_listener"
SEND_MARGIN = (TIMEOUT.read or 15.0) + 5.0
"""A queued job is sent only while at least this much of its lease is left (the request timeout and some slack)."""


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

        async def send(job: Job) -> DeliveryOutcome:
            async with limit:
                return await self.sender.send(job)

        outcomes = await asyncio.gather(*(send(job) for job in jobs))
        await self._record(list(zip(jobs, outcomes, strict=True)))
        return len(jobs)

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver until `stop` is set: a feeder claims into a fair queue, `concurrency` senders take from it in
        turn, a recorder writes finished attempts in batches. A hanging receiver holds its endpoint's share of the
        senders, not the others."""
        await _Pipeline(self, stop).run()

    async def _claim_batch(self, size: int, *, always_dispatch: bool = False, room: Room | None = None) -> list[Job]:
        """Dispatch (at most once per poll interval while the outbox is empty), then claim up to `size` within
        `room`."""
        if always_dispatch or time.monotonic() >= self._next_dispatch:
            async with self.sessionmaker.begin() as session:
                found = await dispatch(session, batch=self.settings.webhooks_batch_size * 5, now=utcnow())
            self._next_dispatch = 0.0 if found else time.monotonic() + self.settings.webhooks_poll_seconds
        async with self.sessionmaker.begin() as session:
            lease = timedelta(seconds=self.settings.webhooks_lease_seconds)
            return await claim(session, batch=size, now=utcnow(), box=self.box, lease=lease, room=room)

    async def _record(self, results: list[tuple[Job, DeliveryOutcome]]) -> None:
        for _, outcome in results:
            WEBHOOK_ATTEMPTS.labels(outcome.kind).inc()
            if outcome.latency_ms is not None:
                WEBHOOK_LATENCY.observe(outcome.latency_ms / 1000)
        async with self.sessionmaker.begin() as session:
            await record(session, results, now=utcnow(), rng=self.rng)

    async def close(self) -> None:
        await self.sender.close()


class _Pipeline:
    """The state of one `Worker.run`: claimed jobs queued by account and endpoint, the senders, finished attempts.

    Senders take the queued jobs in turn by account, then by endpoint within the account (`FairQueue`), at most
    `endpoint_share` attempts to one endpoint at once, test events first: a slow endpoint holds a few senders, never
    all. The feeder claims while there is room: an endpoint may hold (queued and in flight) about a quarter of a lease
    of work at the pace its attempts take (at least twice its share, at most a batch), an account at least twice the
    concurrency; it claims again when a commit in this process (or a NOTIFY on PostgreSQL) says a delivery was
    queued, when an endpoint's holding falls to half, and every poll interval. A job whose lease could end before its
    attempt does is left to the next claim. On stop, queued jobs are dropped unsent (their leases end and they are
    claimed again), attempts in flight finish and are recorded."""

    def __init__(self, worker: Worker, stop: asyncio.Event) -> None:
        settings = worker.settings
        self.worker = worker
        self.stop = stop
        self.concurrency = settings.webhooks_concurrency
        self.queue: FairQueue[uuid.UUID, uuid.UUID, tuple[float, Job]] = FairQueue(endpoint_share(settings))
        self.sendable = asyncio.Event()
        self.wake = asyncio.Event()
        self.closing = False
        self.pace: dict[uuid.UUID, float] = {}  # seconds an attempt to the endpoint takes, smoothed
        self.send_within = max(settings.webhooks_lease_seconds / 2, settings.webhooks_lease_seconds - SEND_MARGIN)
        self.finished: list[tuple[Job, DeliveryOutcome]] = []
        self.ready = asyncio.Event()
        self.sending = True

    async def run(self) -> None:
        with waking(self.wake):
            follower = self._follower()
            senders = [asyncio.create_task(self._send()) for _ in range(self.concurrency)]
            recorder = asyncio.create_task(self._recorder())
            try:
                await self._feed()
            finally:
                if follower is not None:
                    await follower.close()
            self.queue.clear()
            self.closing = True
            self.sendable.set()
            await asyncio.gather(*senders)
            self.sending = False
            self.ready.set()
            await recorder

    def _follower(self) -> Follower | None:
        """On PostgreSQL, a LISTEN for the deliveries other processes queue (this process's own wake it directly)."""
        dsn = asyncpg_dsn(make_url(self.worker.settings.resolved_database_url))
        if dsn is None:
            return None

        async def watch(on_change: Callable[[], None]) -> None:
            await listen(dsn, CHANNEL, on_change, application_name=LISTENER_NAME)

        follower = Follower(LISTENER_NAME, watch, on_heard=self.wake.set, on_lost=lambda: None, retry_seconds=5.0)
        follower.start()
        return follower

    async def _feed(self) -> None:
        while not self.stop.is_set():
            self.wake.clear()
            wait = await self.feed_once()
            if wait:
                await _first(self.stop.wait(), self.wake.wait(), asyncio.sleep(wait))

    async def feed_once(self) -> float:
        """Claim what there is room for into the queue; the seconds to wait before the next claim (0: claim again).

        The loop must outlive any failure: a lost database waits longer and longer (`DatabaseOutage`, one log line
        when it goes and one when it is back), anything else is logged and retried after the poll interval."""
        poll = self.worker.settings.webhooks_poll_seconds
        size = min(self.worker.settings.webhooks_batch_size, 3 * self.concurrency)
        try:
            jobs = await self.worker._claim_batch(size, room=self.room())
        except Exception as exc:
            if is_database_unreachable(exc):
                return max(poll, self.worker.outage.failed(exc))
            log.exception("webhook_worker_claim_failed")
            return poll
        self.worker.outage.succeeded()
        claimed = time.monotonic()
        for job in jobs:
            self.queue.put(job.account_id, job.endpoint_id, (claimed, job), urgent=job.urgent)
        if jobs:
            self.sendable.set()
        return 0.0 if jobs else poll

    def room(self) -> Room:
        """What the next claim may take: each endpoint's and account's holding limit less what the queue holds."""
        endpoints = {key: self.hold_limit(key) - self.queue.held(key) for key in {*self.pace, *self.queue.lanes()}}
        accounts = {
            self.queue.group_of(key): self.account_limit(self.queue.group_of(key))
            - self.queue.held_by(self.queue.group_of(key))
            for key in self.queue.lanes()
        }
        return Room(self.hold_limit(None), 2 * self.concurrency, endpoints, accounts)

    def hold_limit(self, endpoint: uuid.UUID | None) -> int:
        """How many jobs of the endpoint the queue may hold: a quarter of a lease of work at its pace, at least
        twice its share of the senders (all an endpoint not yet heard from gets), at most a batch."""
        least = 2 * self.queue.per_lane
        pace = self.pace.get(endpoint) if endpoint is not None else None
        if pace is None:
            return least
        settings = self.worker.settings
        affordable = int(self.queue.per_lane * settings.webhooks_lease_seconds / 4 / max(pace, 0.001))
        return max(least, min(settings.webhooks_batch_size, affordable))

    def account_limit(self, account: uuid.UUID) -> int:
        held = [self.hold_limit(lane) for lane in self.queue.lanes() if self.queue.group_of(lane) == account]
        return max([2 * self.concurrency, *held])

    async def _send(self) -> None:
        while True:
            taken = self.queue.take()
            if taken is None:
                if self.closing:
                    return
                self.sendable.clear()
                await self.sendable.wait()
                continue
            endpoint, (claimed, job) = taken
            if time.monotonic() - claimed > self.send_within:  # its lease could end mid-attempt: claim it again
                self._done(endpoint, job)
                continue
            started = time.monotonic()
            try:
                outcome = await self.worker.sender.send(job)
            except Exception:  # a bug must not take a sender down: the attempt counts as failed
                log.exception("webhook_send_failed", delivery_id=str(job.delivery_id))
                outcome = DeliveryOutcome(None, 0, "internal error while sending", None)
            elapsed = time.monotonic() - started
            self.pace[endpoint] = elapsed if endpoint not in self.pace else 0.8 * self.pace[endpoint] + 0.2 * elapsed
            self.finished.append((job, outcome))
            self.ready.set()
            self._done(endpoint, job)

    def _done(self, endpoint: uuid.UUID, job: Job) -> None:
        """The job left the queue: its endpoint may take another; wake the feeder when a holding fell to half."""
        self.queue.done(endpoint)
        self.sendable.set()
        if self.queue.held(endpoint) == self.hold_limit(endpoint) // 2 or (
            self.queue.held_by(job.account_id) == self.account_limit(job.account_id) // 2
        ):
            self.wake.set()

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


def endpoint_share(settings: Settings) -> int:
    """Attempts to one endpoint at once: `COMPLIANCE_WEBHOOKS_ENDPOINT_CONCURRENCY`, and always fewer than the
    worker's concurrency, so another endpoint finds a free sender."""
    return max(1, min(settings.webhooks_endpoint_concurrency, settings.webhooks_concurrency - 1))


async def _first(*waits: Coroutine[Any, Any, Any]) -> None:
    """Wait until the first of `waits` finishes; cancel the others."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
