"""A bulk run: the file's rows a block at a time, each block's batches sent through a `BulkSender` (over HTTP or in the
database), each answer matched to its rows, the block's results written before the next block is read."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from compliance_api.cli.bulk.rows import BLOCK_ROWS, Batch, ResultWriter, Row, RowError, RowOutcome, batches

SHOWN_ERRORS = 20
"""Refused rows the report keeps to name on stderr; the results file names them all."""
RESUME = (
    "run the same command on the same file again to resume: within 24 hours the answered batches are replayed, not "
    "classified again"
)


@dataclass(frozen=True, slots=True)
class BulkAnswer:
    """A batch endpoint's `data`, and whether it was replayed for a key an earlier run sent."""

    items: Sequence[Mapping[str, Any]]
    replayed: bool


class BulkSender(Protocol):
    async def send(self, batch: Batch) -> BulkAnswer:
        """The answer to one batch under its Idempotency-Key; raises SendFailed when there will be none."""


class SendFailed(Exception):
    """A batch that got no answer (after the retries its failure allows). `resumable`: whether running the command
    again may get one (not after a 401, a 404 or a host that does not resolve)."""

    def __init__(self, message: str, *, resumable: bool = True) -> None:
        super().__init__(message)
        self.resumable = resumable


class RunStopped(ValueError):
    """A run that stopped before every batch was answered (a user error: `error: …`, exit 1)."""


@dataclass(slots=True)
class Report:
    """What a run did so far: counts, and the first refused rows' errors (a run of any size keeps only these)."""

    rows: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    replayed: int = 0
    """Verdicts answered from an earlier run of the same file (not classified again)."""
    batches: int = 0
    """Batches answered."""
    errors: list[str] = field(default_factory=list)

    @property
    def refused(self) -> int:
        return self.rows - self.verdicts.total()

    def add(self, batch: Batch, answer: BulkAnswer, outcomes: dict[int, RowOutcome]) -> None:
        if len(answer.items) != len(batch.rows):
            raise SendFailed(f"{batch.lines}: the answer has {len(answer.items)} items for {len(batch.rows)} rows")
        for row, item in zip(batch.rows, answer.items, strict=True):
            outcomes[row.line] = outcome = RowOutcome.of_item(row.line, item)
            self.replayed += bool(answer.replayed and outcome.id)
        self.batches += 1

    def count(self, rows: Sequence[Row], outcomes: Mapping[int, RowOutcome]) -> None:
        for row in rows:
            outcome = outcomes[row.line]
            self.rows += 1
            if outcome.verdict:
                self.verdicts[outcome.verdict] += 1
            elif len(self.errors) < SHOWN_ERRORS:
                self.errors.append(outcome.error)

    def answered(self) -> str:
        """How far the run got, for a message about a run that stopped."""
        return f"{self.batches} batches were answered"


@dataclass(frozen=True, slots=True)
class Pacing:
    """How a run sends: rows per batch, the run's id in each batch's Idempotency-Key, batches in flight at once."""

    batch_size: int
    run_id: str
    concurrency: int


async def classify_rows(
    rows: Iterable[Row], sender: BulkSender, write: ResultWriter, report: Report, pacing: Pacing
) -> Report:
    """Every row's outcome, a block of the file at a time: a row that cannot be sent keeps its error, the others are
    sent in batches, `pacing.concurrency` at a time; each block's results are written (`write`) and counted in `report`
    before the next block is read. The first batch that gets no answer stops the run (RunStopped), saying how to
    resume it when running again can help."""
    remaining = iter(rows)
    for block in iter(lambda: tuple(itertools.islice(remaining, BLOCK_ROWS)), ()):
        outcomes = {
            row.line: RowOutcome.refused(row.line, row.parsed) for row in block if isinstance(row.parsed, RowError)
        }
        try:
            await _send(batches(block, pacing.batch_size, pacing.run_id), sender, report, outcomes, pacing.concurrency)
        except* SendFailed as failed:
            first = failed.exceptions[0]
            assert isinstance(first, SendFailed)
            advice = f"; {RESUME}" if first.resumable else ""
            raise RunStopped(f"{first}. {report.answered()} before the run stopped{advice}") from None
        write(block, outcomes)
        report.count(block, outcomes)
    return report


async def _send(
    pending: Sequence[Batch], sender: BulkSender, report: Report, outcomes: dict[int, RowOutcome], concurrency: int
) -> None:
    queue = iter(pending)

    async def work() -> None:
        for batch in queue:  # shared by the workers: each takes the next batch
            report.add(batch, await sender.send(batch), outcomes)

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, len(pending))):
            group.create_task(work())
