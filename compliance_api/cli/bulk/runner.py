"""A bulk run: the file's batches sent through a `Sender` (over HTTP or in the database), each answer matched to its
rows, a progress bar on a terminal."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from compliance_api.cli.bulk.rows import Batch, Outcome, Row, RowError, batches
from compliance_api.cli.common import progress


@dataclass(frozen=True, slots=True)
class Answer:
    """A batch endpoint's `data`, and whether it was replayed for a key an earlier run sent."""

    items: Sequence[Mapping[str, Any]]
    replayed: bool


class Sender(Protocol):
    async def send(self, batch: Batch) -> Answer:
        """The answer to one batch under its Idempotency-Key; raises SendFailed when there will be none."""


class SendFailed(Exception):
    """A batch that got no answer (after the retries its failure allows)."""


class RunStopped(ValueError):
    """A run that stopped before every batch was answered (a user error: `error: …`, exit 1)."""


@dataclass(slots=True)
class Report:
    outcomes: dict[int, Outcome] = field(default_factory=dict)
    """Each row's outcome, by line."""
    replayed: int = 0
    """Verdicts answered from an earlier run of the same file (not classified again)."""

    def add(self, batch: Batch, answer: Answer) -> None:
        if len(answer.items) != len(batch.rows):
            raise SendFailed(f"{batch.lines}: the answer has {len(answer.items)} items for {len(batch.rows)} rows")
        for row, item in zip(batch.rows, answer.items, strict=True):
            self.outcomes[row.line] = outcome = Outcome.of_item(row.line, item)
            self.replayed += bool(answer.replayed and outcome.id)


async def classify_rows(
    rows: Sequence[Row], sender: Sender, *, batch_size: int, run_id: str, concurrency: int
) -> Report:
    """Every row's outcome: a row that cannot be sent keeps its error, the others are sent in batches, `concurrency`
    at a time. The first batch that gets no answer stops the run (RunStopped), saying how to resume it."""
    report = Report(
        {row.line: Outcome.refused(row.line, row.parsed) for row in rows if isinstance(row.parsed, RowError)}
    )
    pending = batches(rows, batch_size, run_id)
    queue = iter(pending)
    with progress(len(rows), "classifying", min_rows=1) as advance:

        async def work() -> None:
            for batch in queue:  # shared by the workers: each takes the next batch
                report.add(batch, await sender.send(batch))
                if advance is not None:
                    advance(len(batch.rows))

        if advance is not None:
            advance(len(report.outcomes))
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(concurrency, len(pending))):
                    group.create_task(work())
        except* SendFailed as failed:
            answered = sum(1 for batch in pending if batch.rows[0].line in report.outcomes)
            raise RunStopped(
                f"{failed.exceptions[0]}. {answered} of {len(pending)} batches were answered before the run stopped; "
                "run the same command on the same file again to resume: within 24 hours the answered batches are "
                "replayed, not classified again"
            ) from None
    return report
