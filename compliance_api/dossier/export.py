"""The audit export: every dossier of a period (PDF and signed JSON) in one zip file, with an index CSV.

The file is written whole or not at all: into a temporary file beside the target, renamed over it only once complete;
any failure, or Ctrl-C, removes the temporary file. Memory stays flat: classifications come from a server-side cursor
one page at a time, PDFs are rendered by a process pool with a bounded number in flight, each dossier is written to
the zip as soon as its PDF is back, and the index is spooled to a temporary file until the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import datetime as dt
import hashlib
import io
import multiprocessing
import os
import tempfile
import zipfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import orjson
from joserfc.jwk import OKPKey
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.classify.ruleset import Rulesets
from compliance_api.dossier.document import build_dossier, sign
from compliance_api.dossier.render import dossier_pdf
from compliance_api.dossier.schemas import Dossier
from compliance_api.dossier.service import DossierFacts, Period, stream_period

INDEX_NAME = "index.csv"
INDEX_COLUMNS = (
    "classification_id",
    "created_at",
    "environment",
    "test",
    "country",
    "reference",
    "current_verdict",
    "original_verdict",
    "ruleset_id",
    "ruleset_version",
    "language",
    "account",
    "asked_through",
    "asked_by",
    "request_id",
    "pdf",
    "pdf_sha256",
    "json",
    "json_sha256",
)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(text: str | None) -> str:
    """A client's own text as a CSV cell a spreadsheet will not run as a formula (OWASP's CSV injection advice: a
    leading quote). Hand-written: the one rule is three lines, and no maintained library does only this."""
    value = text or ""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def render_signed(dossier_json: bytes, jws: str) -> bytes:
    """The PDF of a dossier given as JSON: what a pool process runs (its arguments cross the process boundary)."""
    return dossier_pdf(Dossier.model_validate_json(dossier_json), jws)


@dataclass(frozen=True, slots=True)
class Signed:
    """A dossier, signed, waiting for its PDF."""

    dossier: Dossier
    jws: str
    pdf: Future[bytes]


@dataclass(frozen=True, slots=True)
class ExportOptions:
    rulesets: Rulesets
    key: OKPKey
    jwks: str
    issued_at: dt.datetime
    workers: int


class _Archive:
    """The zip being written, and its index spooled beside it."""

    def __init__(self, target: IO[bytes]) -> None:
        self.zip = zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True)
        self.index = tempfile.TemporaryFile("w+", encoding="utf-8", newline="")  # closed in close()
        self.rows = csv.writer(self.index)
        self.rows.writerow(INDEX_COLUMNS)
        self.written = 0

    def add(self, dossier: Dossier, jws: str, pdf: bytes) -> None:
        stem = f"dossiers/{dossier.asked.asked_at:%Y-%m-%d}/{dossier.classification_id}"
        signed = orjson.dumps({"dossier": dossier.model_dump(mode="json"), "jws": jws}, option=orjson.OPT_INDENT_2)
        self.zip.writestr(zipfile.ZipInfo(f"{stem}.pdf", _stamp(dossier)), pdf, compress_type=zipfile.ZIP_STORED)
        self.zip.writestr(zipfile.ZipInfo(f"{stem}.json", _stamp(dossier)), signed)
        self.rows.writerow(_index_row(dossier, stem, pdf, signed))
        self.written += 1

    def close(self) -> None:
        self.index.seek(0)
        with self.zip.open(INDEX_NAME, "w") as member, io.TextIOWrapper(member, encoding="utf-8", newline="") as out:
            for chunk in iter(lambda: self.index.read(1 << 16), ""):
                out.write(chunk)
        self.zip.close()
        self.index.close()

    def abandon(self) -> None:
        with contextlib.suppress(Exception):
            self.zip.close()
        self.index.close()


def _stamp(dossier: Dossier) -> tuple[int, int, int, int, int, int]:
    moment = dossier.asked.asked_at.astimezone(dt.UTC)
    return moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second


def _index_row(dossier: Dossier, stem: str, pdf: bytes, signed: bytes) -> list[str]:
    asked = dossier.asked
    if asked.channel == "api":
        by = asked.token.name if asked.token and asked.token.name else ""
    else:
        by = asked.dashboard_user.email if asked.dashboard_user and asked.dashboard_user.email else ""
    return [
        str(dossier.classification_id),
        asked.asked_at.isoformat(),
        dossier.environment,
        dossier.test.kind.value,
        dossier.test.country.value if dossier.test.country else "",
        _cell(dossier.reference),
        dossier.verdict.current.value,
        dossier.verdict.original.value,
        dossier.ruleset.id,
        dossier.ruleset.version.isoformat(),
        dossier.language,
        asked.account.email or "",
        asked.channel,
        _cell(by),
        _cell(asked.request_id),
        f"{stem}.pdf",
        hashlib.sha256(pdf).hexdigest(),
        f"{stem}.json",
        hashlib.sha256(signed).hexdigest(),
    ]


def _signed(facts: DossierFacts, options: ExportOptions, pool: ProcessPoolExecutor) -> Signed:
    dossier = build_dossier(
        facts, options.rulesets, kid=str(options.key.kid), jwks=options.jwks, issued_at=options.issued_at
    )
    jws = sign(dossier, options.key)
    return Signed(dossier, jws, pool.submit(render_signed, dossier.model_dump_json().encode(), jws))


async def _write_all(
    session: AsyncSession,
    period: Period,
    since: dt.datetime,
    options: ExportOptions,
    archive: _Archive,
    progress: Callable[[int], None] | None,
) -> None:
    # spawn, not fork: the parent holds an event loop and database connections a forked child must not share.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=options.workers, mp_context=context) as pool:
        pending: deque[Signed] = deque()
        try:
            async for facts in stream_period(session, period, since):
                pending.append(_signed(facts, options, pool))
                if len(pending) >= 2 * options.workers:  # enough to keep every worker busy, no more
                    await _write_oldest(pending, archive, progress)
            while pending:
                await _write_oldest(pending, archive, progress)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


async def _write_oldest(pending: deque[Signed], archive: _Archive, progress: Callable[[int], None] | None) -> None:
    oldest = pending.popleft()
    archive.add(oldest.dossier, oldest.jws, await asyncio.wrap_future(oldest.pdf))
    if progress is not None:
        progress(1)


@contextlib.contextmanager
def _atomic_file(out: Path) -> Iterator[IO[bytes]]:
    """A temporary file beside `out` (owner-only: dossiers name people), renamed over `out` when the block ends
    normally and removed when it raises, Ctrl-C and cancellation included."""
    draft = tempfile.NamedTemporaryFile(  # renamed or removed below
        dir=out.parent, prefix=f".{out.name}.", suffix=".part", delete=False
    )
    try:
        with draft:
            yield draft
            draft.flush()
            os.fsync(draft.fileno())
        os.replace(draft.name, out)
    except BaseException:
        Path(draft.name).unlink(missing_ok=True)
        raise


async def export_period(
    session: AsyncSession,
    period: Period,
    since: dt.datetime,
    out: Path,
    options: ExportOptions,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Write the period's dossiers to `out` (replaced only when complete); returns how many."""
    with _atomic_file(out) as draft:
        archive = _Archive(draft)
        try:
            await _write_all(session, period, since, options, archive, progress)
            archive.close()
        except BaseException:
            archive.abandon()
            raise
    return archive.written
