"""`classify bulk`'s own memory on a large file: the command's code (`cli/bulk/`) reads a generated CSV of `--mb`
megabytes, sends it in batches to a sender that answers every row at once in-process (no server, so only the
command's own memory is measured), and writes the results file. Prints the file's size, the rows, the wall time and
the process's peak resident memory (`ru_maxrss`), also for a run on a file a tenth of the size: flat memory means
about the same peak for both.

    .venv/bin/python bench/bulk_memory.py [--mb 50]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compliance_api.cli.bulk.rows import Batch, read_rows, results_file
from compliance_api.cli.bulk.runner import BulkAnswer, Pacing, Report, classify_rows

HEADER = "reference,hourly_rate_eur,months_duration,days_per_week,other_clients_count,own_tools,own_liability\n"


class Instant:
    """Answers every row `safe` at once, as a batch endpoint would."""

    async def send(self, batch: Batch) -> BulkAnswer:
        items = [{"id": f"{row.line:032x}", "verdict": "safe", "score": 10} for row in batch.rows]
        return BulkAnswer(items, replayed=False)


def write_csv(path: Path, megabytes: float) -> int:
    rows = 0
    with path.open("w", encoding="utf-8") as file:
        file.write(HEADER)
        while file.tell() < megabytes * 1_000_000:
            file.write(f"engagement-{rows:09d},{40 + rows % 60},{rows % 24 + 1},{rows % 5 + 1},{rows % 4},yes,no\n")
            rows += 1
    return rows


async def run(source: Path, out: Path) -> Report:
    report = Report()
    with source.open("rb") as file:
        header, rows = read_rows(file, None)
        with results_file(out, header) as write:
            await classify_rows(rows, Instant(), write, report, Pacing(100, "", 4))
    return report


def measure(megabytes: float) -> None:
    """One run in this process (started fresh by `main` for each size)."""
    with tempfile.TemporaryDirectory(prefix="bench-bulk-memory-") as folder:
        source, out = Path(folder) / "engagements.csv", Path(folder) / "verdicts.csv"
        write_csv(source, megabytes)
        started = time.perf_counter()
        report = asyncio.run(run(source, out))
        seconds = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        size = source.stat().st_size / 1_000_000
        print(f"{size:.1f} MB, {report.rows:,} rows: {seconds:.1f} s, peak resident memory {peak_mb:.0f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--one", type=float, help=argparse.SUPPRESS)  # a single measurement, in a child process
    args = parser.parse_args()
    if args.one is not None:
        measure(args.one)
        return 0
    for megabytes in (args.mb / 10, args.mb):
        subprocess.run([sys.executable, __file__, "--one", str(megabytes)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
