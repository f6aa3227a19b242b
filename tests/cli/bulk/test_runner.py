"""A bulk run reads its rows a block at a time, writes each block's results before reading the next, and says how to
resume only when running again can help."""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping, Sequence

import pytest

from compliance_api.cli.bulk.rows import BLOCK_ROWS, Batch, Row, RowOutcome, read_rows
from compliance_api.cli.bulk.runner import BulkAnswer, Pacing, Report, RunStopped, SendFailed, classify_rows


def _rows(count: int) -> Iterator[Row]:
    text = "reference,own_tools\n" + "".join(f"r{n},yes\n" for n in range(count))
    return read_rows(io.BytesIO(text.encode()), None)[1]


class Counted:
    """The rows, counting how many were taken."""

    def __init__(self, rows: Iterator[Row]) -> None:
        self.rows, self.taken = rows, 0

    def __iter__(self) -> Iterator[Row]:
        for row in self.rows:
            self.taken += 1
            yield row


class Verdicts:
    """Answers every row `safe`, noting how many rows had been taken from the file when each batch was sent."""

    def __init__(self, counted: Counted, failing_after: int | None = None, resumable: bool = True) -> None:
        self.counted, self.taken_at_send = counted, list[int]()
        self.failing_after, self.resumable = failing_after, resumable

    async def send(self, batch: Batch) -> BulkAnswer:
        if self.failing_after is not None and len(self.taken_at_send) >= self.failing_after:
            raise SendFailed(f"{batch.lines}: refused", resumable=self.resumable)
        self.taken_at_send.append(self.counted.taken)
        return BulkAnswer([{"id": str(row.line), "verdict": "safe", "score": 1} for row in batch.rows], replayed=False)


async def test_rows_are_read_sent_and_written_a_block_at_a_time() -> None:
    counted = Counted(_rows(2500))
    sender = Verdicts(counted)
    written: list[tuple[int, int]] = []

    def write(rows: Sequence[Row], outcomes: Mapping[int, RowOutcome]) -> None:
        written.append((len(rows), counted.taken))
        assert all(outcomes[row.line].verdict == "safe" for row in rows)

    report = await classify_rows(counted, sender, write, Report(), Pacing(100, "", 4))
    assert written == [(BLOCK_ROWS, BLOCK_ROWS), (BLOCK_ROWS, 2 * BLOCK_ROWS), (500, 2500)]
    assert max(sender.taken_at_send) == 2500
    assert sender.taken_at_send[:10] == [BLOCK_ROWS] * 10  # the first block's batches: nothing more read yet
    assert (report.rows, report.verdicts["safe"], report.batches) == (2500, 2500, 25)


@pytest.mark.parametrize(("resumable", "advised"), [(True, True), (False, False)])
async def test_a_stopped_run_says_what_was_answered_and_advises_resuming_only_when_it_helps(
    resumable: bool, advised: bool
) -> None:
    counted = Counted(_rows(300))
    sender = Verdicts(counted, failing_after=2, resumable=resumable)
    with pytest.raises(RunStopped) as stopped:
        await classify_rows(counted, sender, lambda *_: None, Report(), Pacing(100, "", 1))
    assert "2 batches were answered before the run stopped" in str(stopped.value)
    assert ("run the same command on the same file again to resume" in str(stopped.value)) is advised
