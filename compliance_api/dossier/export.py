"""The audit export: every dossier of a period (PDF and signed JSON) in one zip file, with an index CSV, and what an
auditor needs to check it offline without our software.

Beside `dossiers/…` and `index.csv` (every dossier file with its SHA-256), the zip holds `index.jws` (a compact JWS
whose payload is the exact bytes of `index.csv`, signed with the key that signed the dossiers), `jwks.json` (that
key), `signing-certificate.pem` (the certificate of the PDF signatures), `verify.py` (a short check with the Python
standard library and joserfc) and `VERIFY-<en|nl|fr|de>.txt` (how to check everything, with that script or by
hand). Removing a dossier breaks the index's hashes; removing its index line too breaks `index.jws`.

The file is written whole or not at all: into a temporary file beside the target, renamed over it only once complete;
any failure, or Ctrl-C, removes the temporary file, and a second export to the same target while one runs fails
(the temporary file has a fixed name and is locked). Memory stays flat: classifications come from a server-side
cursor one page at a time, PDFs are typeset by a process pool with a bounded number in flight (a worker imports
Typst and little else: `typeset.py`), each dossier is signed and written to the zip as soon as its PDF is back, and
the index is spooled to a temporary file until the end. Every
member is deflated (the PDFs too: their signature's reserved room is zeros).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import csv
import datetime as dt
import fcntl
import hashlib
import importlib.util
import io
import multiprocessing
import os
import shutil
import string
import sys
import tempfile
import zipfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import IO

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from joserfc.jwk import OKPKey
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.classify.ruleset import Rulesets
from compliance_api.dossier.document import Signers, build_dossier, sign
from compliance_api.dossier.pdf_signature import sign_pdf_on_loop
from compliance_api.dossier.render import log_warnings, page_data, signature_reason
from compliance_api.dossier.schemas import Dossier
from compliance_api.dossier.service import DossierFacts, Period, stream_period
from compliance_api.dossier.typeset import Typeset, typeset_page
from compliance_api.passport.certificates import PdfSigningKey
from compliance_api.passport.signing import ALGORITHM

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
INDEX_JWS_NAME = "index.jws"
JWKS_NAME = "jwks.json"
CERTIFICATE_NAME = "signing-certificate.pem"
VERIFY_SCRIPT_NAME = "verify.py"
VERIFY_LANGUAGES = ("en", "nl", "fr", "de")
MEMBER_MODE = 0o644  # as unzip should create each file (a zip member written from bytes has no mode of its own)


def _cell(text: str | None) -> str:
    """A client's own text as a CSV cell a spreadsheet will not run as a formula (OWASP's CSV injection advice: a
    leading quote). Hand-written: the one rule is three lines, and no maintained library does only this."""
    value = text or ""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


@dataclass(frozen=True, slots=True)
class Signed:
    """A dossier, signed, waiting for its PDF (typeset by a worker, signed here)."""

    dossier: Dossier
    jws: str
    pdf: Future[Typeset]


@dataclass(frozen=True, slots=True)
class ExportOptions:
    rulesets: Rulesets
    key: OKPKey
    pdf_key: PdfSigningKey
    jwks: str
    certificates: str
    issued_at: dt.datetime
    workers: int


@dataclass(frozen=True, slots=True)
class Scope:
    """What the export covers, as its verification texts state it."""

    environment: str
    first_day: dt.date
    last_day: dt.date
    account: str | None


class _Archive:
    """The zip being written, and its index spooled beside it."""

    def __init__(self, target: IO[bytes]) -> None:
        self.zip = zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True)
        self.index = tempfile.TemporaryFile("w+b")  # closed in close()
        self.text = io.TextIOWrapper(self.index, encoding="utf-8", newline="", write_through=True)
        self.rows = csv.writer(self.text)
        self.rows.writerow(INDEX_COLUMNS)
        self.written = 0

    def _member(self, name: str, moment: dt.datetime, content: bytes) -> None:
        """A deflated member (ZipInfo would otherwise store it: `writestr` ignores the zip's compression)."""
        self.zip.writestr(_info(name, moment), content)

    def add(self, dossier: Dossier, jws: str, pdf: bytes) -> None:
        stem = f"dossiers/{dossier.asked.asked_at:%Y-%m-%d}/{dossier.classification_id}"
        signed = orjson.dumps({"dossier": dossier.model_dump(mode="json"), "jws": jws}, option=orjson.OPT_INDENT_2)
        self._member(f"{stem}.pdf", dossier.asked.asked_at, pdf)
        self._member(f"{stem}.json", dossier.asked.asked_at, signed)
        self.rows.writerow(_index_row(dossier, stem, pdf, signed))
        self.written += 1

    def close(self, options: ExportOptions, scope: Scope) -> None:
        """The index, its signature and what checks them; then the zip is complete."""
        moment = options.issued_at
        self.text.flush()
        self.index.seek(0)
        with self.zip.open(_info(INDEX_NAME, moment), "w") as member:
            shutil.copyfileobj(self.index, member)
        self.index.seek(0)
        signing_input = _signing_input(options.key, self.index)  # about 540 bytes a dossier
        signature = _base64url(_ed25519(options.key).sign(signing_input))
        with self.zip.open(_info(INDEX_JWS_NAME, moment), "w") as member:
            member.write(signing_input)
            member.write(b"." + signature)
        jwks = {"keys": [options.key.as_dict(private=False, kid=options.key.kid, alg=ALGORITHM)]}
        self._member(JWKS_NAME, moment, orjson.dumps(jwks, option=orjson.OPT_INDENT_2))
        self._member(CERTIFICATE_NAME, moment, options.pdf_key.certificate_pem)
        self._member(VERIFY_SCRIPT_NAME, moment, verify_script())
        for language, text in verification_texts(options, scope, self.written).items():
            self._member(f"VERIFY-{language}.txt", moment, text.encode())
        self.zip.close()
        self.text.close()

    def abandon(self) -> None:
        with contextlib.suppress(Exception):
            self.zip.close()
        self.text.close()


def verify_script() -> bytes:
    """The auditor's check (`verify_export.py`, which imports nothing of ours), as the export carries it."""
    return resources.files("compliance_api.dossier").joinpath("verify_export.py").read_bytes()


def verification_texts(options: ExportOptions, scope: Scope, count: int) -> dict[str, str]:
    """How to check the export, in each language the texts are written in (templates/verify-<language>.txt)."""
    values = {
        "environment": scope.environment if scope.account is None else f"{scope.environment} ({scope.account})",
        "first_day": scope.first_day.isoformat(),
        "last_day": scope.last_day.isoformat(),
        "count": str(count),
        "issued_at": options.issued_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "kid": str(options.key.kid),
        "fingerprint": options.pdf_key.fingerprint,
        "jwks_url": options.jwks,
        "certificates_url": options.certificates,
    }
    folder = resources.files("compliance_api.dossier").joinpath("templates")
    return {
        language: string.Template(folder.joinpath(f"verify-{language}.txt").read_text(encoding="utf-8")).substitute(
            values
        )
        for language in VERIFY_LANGUAGES
    }


def _info(name: str, moment: dt.datetime) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, _stamp(moment))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = MEMBER_MODE << 16
    return info


def _base64url(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def _ed25519(key: OKPKey) -> Ed25519PrivateKey:
    private = key.private_key
    assert isinstance(private, Ed25519PrivateKey), "passport keys are Ed25519 (passport/signing.py)"
    return private


def _signing_input(key: OKPKey, payload: IO[bytes]) -> bytearray:
    """A compact JWS's signed part (RFC 7515: header and payload, base64url, joined by a dot) over what `payload`
    holds, read from it a slice at a time.

    Hand-written for the index only: a JOSE library holds the payload in four copies while it serializes (about
    30 MB for 10,000 dossiers, the export's largest moment); this holds one, base64url (Ed25519 signs a whole
    message, so that one is needed). joserfc and PyJWT verify the result in the tests; every other signature is
    joserfc's (`passport.signing.sign_with`)."""
    signing_input = bytearray(_base64url(orjson.dumps({"alg": ALGORITHM, "kid": key.kid})) + b".")
    while chunk := payload.read(3 * 2**16):  # a multiple of 3 bytes: only the last slice can end in padding
        signing_input += _base64url(chunk)
    return signing_input


def _stamp(moment: dt.datetime) -> tuple[int, int, int, int, int, int]:
    utc = moment.astimezone(dt.UTC)
    return utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second


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
    signers = Signers(
        kid=str(options.key.kid),
        jwks_url=options.jwks,
        certificates_url=options.certificates,
        certificate_sha256=options.pdf_key.fingerprint,
    )
    dossier = build_dossier(facts, options.rulesets, signers=signers, issued_at=options.issued_at)
    jws = sign(dossier, options.key)
    return Signed(dossier, jws, pool.submit(typeset_page, orjson.dumps(page_data(dossier, jws)), dossier.issued_at))


@contextlib.contextmanager
def _workers_skip_main() -> Iterator[None]:
    """A spawned worker runs the parent's `__main__` again unless it was started as a package's `__main__` module:
    the `compliance-api` script would import the whole CLI into every worker (about 100 MiB each). While the pool
    runs, the script is named as `compliance_api.__main__`, which a spawned child skips, so a worker imports only
    what it unpickles (`typeset.py`)."""
    main = sys.modules["__main__"]
    if getattr(main, "__spec__", None) is not None:  # `python -m …`: spawn already knows what to skip
        yield
        return
    main.__spec__ = importlib.util.find_spec("compliance_api.__main__")
    try:
        yield
    finally:
        main.__spec__ = None


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
    with _workers_skip_main(), ProcessPoolExecutor(max_workers=options.workers, mp_context=context) as pool:
        pending: deque[Signed] = deque()
        try:
            async for facts in stream_period(session, period, since):
                pending.append(_signed(facts, options, pool))
                if len(pending) >= 2 * options.workers:  # enough to keep every worker busy, no more
                    await _write_oldest(pending, archive, options, progress)
            while pending:
                await _write_oldest(pending, archive, options, progress)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


async def _write_oldest(
    pending: deque[Signed], archive: _Archive, options: ExportOptions, progress: Callable[[int], None] | None
) -> None:
    oldest = pending.popleft()
    done = await asyncio.wrap_future(oldest.pdf)
    log_warnings(oldest.dossier, done)
    pdf = await sign_pdf_on_loop(done.pdf, options.pdf_key, signature_reason(oldest.dossier))
    archive.add(oldest.dossier, oldest.jws, pdf)
    if progress is not None:
        progress(1)


class ExportRunning(ValueError):
    def __init__(self, out: Path) -> None:
        super().__init__(f"another export to {out} is running; wait for it to finish, or choose another --out")


class ExportTargetExists(ValueError):
    def __init__(self, out: Path) -> None:
        super().__init__(f"{out} exists; pass --force to replace it")


def _locked_draft(draft: Path, out: Path) -> IO[bytes]:
    """The draft file, created if need be, locked for this process (ExportRunning if another holds it), emptied.

    A lock on a file others may rename or remove is only ours if the name still leads to the file we locked: an
    export that has just finished renamed its draft over `out`, and locking that file would be locking `out`; so the
    name is opened again until both agree. The lock goes with the process, so a killed export leaves nothing that
    stops the next one. Hand-written: filelock's lock files stay behind, and the draft is the natural lock."""
    while True:
        descriptor = os.open(draft, os.O_RDWR | os.O_CREAT, 0o600)  # owner-only: dossiers name people
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(descriptor).st_ino == os.stat(draft).st_ino:
                os.ftruncate(descriptor, 0)
                return os.fdopen(descriptor, "w+b")
        except BlockingIOError:
            os.close(descriptor)
            raise ExportRunning(out) from None
        except FileNotFoundError:  # renamed away between open and stat: open the name again
            pass
        os.close(descriptor)


@contextlib.contextmanager
def _atomic_file(out: Path, *, replace: bool) -> Iterator[IO[bytes]]:
    """A draft beside `out`, moved to `out` when the block ends normally (over an existing `out` only if `replace`)
    and removed when it raises, Ctrl-C and cancellation included; held locked meanwhile."""
    draft = out.parent / f".{out.name}.part"
    with _locked_draft(draft, out) as handle:
        try:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
            if replace:
                os.replace(draft, out)
            else:
                _link_new(draft, out)
        except BaseException:
            draft.unlink(missing_ok=True)
            raise


def _link_new(draft: Path, out: Path) -> None:
    """`draft` as `out`, failing if `out` appeared meanwhile (a link never replaces a file)."""
    try:
        os.link(draft, out)
    except FileExistsError:
        raise ExportTargetExists(out) from None
    draft.unlink()


async def export_period(
    session: AsyncSession,
    period: Period,
    since: dt.datetime,
    out: Path,
    options: ExportOptions,
    scope: Scope,
    progress: Callable[[int], None] | None = None,
    *,
    replace: bool = False,
) -> int:
    """Write the period's dossiers to `out` (replaced, if `replace`, only when complete); returns how many."""
    with _atomic_file(out, replace=replace) as draft:
        archive = _Archive(draft)
        try:
            await _write_all(session, period, since, options, archive, progress)
            archive.close(options, scope)
        except BaseException:
            archive.abandon()
            raise
    return archive.written
