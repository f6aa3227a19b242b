"""`compliance-api classifications export`: a period's dossiers in one zip, written whole or not at all, one export
to a file at a time, checked by an auditor with the export's own verify.py (our package not imported) and the
PDFs' signatures with pyHanko."""

from __future__ import annotations

import asyncio
import csv
import datetime as dt
import hashlib
import io
import json
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path
from typing import Any

import jwt
from pyhanko.keys import load_certs_from_pemder_data
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import async_validate_pdf_signature
from pyhanko_certvalidator import ValidationContext
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import User
from compliance_api.classify import service
from compliance_api.classify.models import Classification
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.dossier.export import INDEX_COLUMNS, _locked_draft
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.passport.signing import SigningKeys
from tests.classify.conftest import caller_for
from tests.cli.conftest import invoke
from tests.dossier.conftest import pdf_text
from tests.factories import create_user

DAY = dt.datetime(2026, 3, 10, 9, tzinfo=dt.UTC)
AUDITOR_FILES = (
    "index.csv",
    "index.jws",
    "jwks.json",
    "signing-certificate.pem",
    "verify.py",
    "VERIFY-en.txt",
    "VERIFY-nl.txt",
    "VERIFY-fr.txt",
    "VERIFY-de.txt",
)


async def _classify(
    audit: GroupCommit, user: User, environment: Environment, at: dt.datetime, body: dict[str, Any]
) -> str:
    caller = caller_for(user, environment)
    if "country" in body:
        request = CrossBorderRequest.model_validate(body, strict=False)
        verdict = await service.classify_cross_border(audit, caller, request, packaged_rulesets(), at)
    else:
        dutch = ZelfstandigenwetRequest.model_validate(body, strict=False)
        verdict = await service.classify_engagement(audit, caller, dutch, packaged_rulesets(), at)
    return str(verdict.id)


async def _export(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    return await asyncio.to_thread(invoke, env, "classifications", "export", "--workers", "1", *args)


def _members(path: Path) -> tuple[list[dict[str, str]], zipfile.ZipFile]:
    archive = zipfile.ZipFile(path)
    rows = list(csv.DictReader(io.StringIO(archive.read("index.csv").decode())))
    return rows, archive


async def test_the_export_holds_each_dossier_of_the_period_as_pdf_and_signed_json_with_an_index(
    cli_env: dict[str, str], audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    owner, other = await create_user(sessionmaker), await create_user(sessionmaker)
    dutch = await _classify(
        audit, owner, Environment.live, DAY, {"engagement": {"hourly_rate_eur": 90}, "reference": "=HYPERLINK(1)"}
    )
    french = await _classify(
        audit, owner, Environment.live, DAY + dt.timedelta(days=20), {"country": "FR", "criteria": {}}
    )
    others = await _classify(audit, other, Environment.live, DAY + dt.timedelta(hours=1), {"engagement": {}})
    await _classify(audit, owner, Environment.live, DAY - dt.timedelta(days=30), {"engagement": {}})  # before
    await _classify(audit, owner, Environment.live, DAY + dt.timedelta(days=40), {"engagement": {}})  # after
    await _classify(audit, owner, Environment.test, DAY, {"engagement": {}})  # the sandbox
    out = tmp_path / "q1.zip"

    code, stdout, stderr = await _export(
        cli_env, "--env", "live", "--from", "2026-03-01", "--to", "2026-03-31", "--out", str(out), "--json"
    )

    assert code == 0, stderr + stdout
    assert json.loads(stdout)["dossiers"] == 3
    rows, archive = _members(out)
    assert list(rows[0]) == list(INDEX_COLUMNS)
    assert [row["classification_id"] for row in rows] == [dutch, others, french], "oldest first"
    assert rows[0]["reference"] == "'=HYPERLINK(1)", "a spreadsheet does not run a client's text as a formula"
    assert (rows[2]["test"], rows[2]["country"], rows[0]["account"]) == ("cross_border", "FR", owner.email)
    keys = SigningKeys(Path(cli_env["COMPLIANCE_VAR_DIR"]) / "keys", generate=False)
    jwks = jwt.PyJWKSet.from_dict(keys.jwks(Environment.live))
    for row in rows:
        pdf, signed = archive.read(row["pdf"]), archive.read(row["json"])
        assert (hashlib.sha256(pdf).hexdigest(), hashlib.sha256(signed).hexdigest()) == (
            row["pdf_sha256"],
            row["json_sha256"],
        )
        body = json.loads(signed)
        assert jwt.decode(body["jws"], key=jwks.keys[-1], algorithms=["EdDSA"]) == body["dossier"]
        assert body["dossier"]["classification_id"] == row["classification_id"]
        assert row["classification_id"] in pdf_text(pdf)
    dossier_files = [*(r["pdf"] for r in rows), *(r["json"] for r in rows)]
    assert sorted(archive.namelist()) == sorted([*AUDITOR_FILES, *dossier_files])

    mine = tmp_path / "owner.zip"  # with the default number of workers (one per CPU)
    code, _, stderr = await asyncio.to_thread(
        invoke,
        cli_env,
        *("classifications", "export", "--from", "2026-03-01", "--to", "2026-03-31", "--out", str(mine)),
        *("--account", owner.email),
    )
    assert code == 0, stderr
    assert [row["classification_id"] for row in _members(mine)[0]] == [dutch, french]


async def test_a_failure_midway_leaves_no_file_and_keeps_the_previous_one(
    cli_env: dict[str, str], audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    owner = await create_user(sessionmaker)
    for hours in range(3):
        await _classify(audit, owner, Environment.live, DAY + dt.timedelta(hours=hours), {"engagement": {}})
    broken = await _classify(audit, owner, Environment.live, DAY + dt.timedelta(hours=5), {"engagement": {}})
    async with sessionmaker.begin() as session:  # a record the dossier cannot be made of, after three good ones
        await session.execute(
            update(Classification).where(Classification.id == uuid.UUID(broken)).values(language="xx")
        )
    folder = tmp_path / "exports"
    folder.mkdir()
    out = folder / "audit.zip"
    out.write_bytes(b"the previous export")

    code, _, stderr = await _export(cli_env, "--from", "2026-03-10", "--to", "2026-03-10", "--out", str(out), "--force")

    assert (code, stderr.startswith("error: ")) == (1, True), stderr
    assert out.read_bytes() == b"the previous export"
    assert sorted(path.name for path in folder.iterdir()) == ["audit.zip"], "no temporary file is left behind"

    fresh = folder / "fresh.zip"
    code, _, _ = await _export(cli_env, "--from", "2026-03-10", "--to", "2026-03-10", "--out", str(fresh))
    assert code == 1
    assert sorted(path.name for path in folder.iterdir()) == ["audit.zip"]


async def test_bad_dates_and_targets_are_clear_errors(cli_env: dict[str, str], tmp_path: Path) -> None:
    out = str(tmp_path / "x.zip")
    cases = [
        (("--from", "2026-13-01", "--to", "2026-12-31", "--out", out), "'2026-13-01' does not match the format"),
        (("--from", "01/03/2026", "--to", "2026-12-31", "--out", out), "'01/03/2026' does not match the format"),
        (("--from", "2026-03-31", "--to", "2026-03-01", "--out", out), "--to 2026-03-01 is before --from 2026-03-31"),
        (("--from", "2026-03-01", "--to", "2026-03-31", "--out", str(tmp_path / "no" / "x.zip")), "does not exist"),
        (("--from", "2026-03-01", "--to", "2026-03-31", "--out", out, "--env", "staging"), "'staging' is not one of"),
    ]
    for args, message in cases:
        code, _, stderr = await _export(cli_env, *args)
        assert code == 2, args
        assert message in " ".join(stderr.replace("│", " ").split()), stderr
    (tmp_path / "x.zip").write_bytes(b"kept")
    code, _, stderr = await _export(cli_env, "--from", "2026-03-01", "--to", "2026-03-31", "--out", out)
    assert code == 2
    assert "exists; pass --force to replace it" in " ".join(stderr.replace("│", " ").split())
    assert (tmp_path / "x.zip").read_bytes() == b"kept"


def _rewritten(source: Path, target: Path, drop: set[str], index: bytes | None = None) -> Path:
    """A copy of the export without the members `drop`, and with `index` as its index.csv if given."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for name in old.namelist():
            if name in drop:
                continue
            new.writestr(name, index if name == "index.csv" and index is not None else old.read(name))
    return target


def _auditor_check(export: Path, jwks: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The export's own verify.py, run as an auditor runs it: a file of its own, outside our package."""
    script = export.parent / f"{export.stem}-verify.py"
    script.write_bytes(zipfile.ZipFile(export).read("verify.py"))
    arguments = [sys.executable, "-I", str(script), str(export), *([str(jwks)] if jwks else [])]
    return subprocess.run(arguments, capture_output=True, text=True, timeout=120, cwd=export.parent)


async def _two_dossiers(
    cli_env: dict[str, str], audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> Path:
    owner = await create_user(sessionmaker)
    for hours in range(2):
        await _classify(audit, owner, Environment.live, DAY + dt.timedelta(hours=hours), {"engagement": {}})
    out = tmp_path / "audit.zip"
    code, _, stderr = await _export(cli_env, "--from", "2026-03-10", "--to", "2026-03-10", "--out", str(out))
    assert code == 0, stderr
    return out


async def test_an_auditor_checks_the_export_offline_and_a_removed_dossier_fails_the_check(
    cli_env: dict[str, str], audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    out = await _two_dossiers(cli_env, audit, sessionmaker, tmp_path)
    rows, archive = _members(out)
    published = tmp_path / "published-jwks.json"
    keys = SigningKeys(Path(cli_env["COMPLIANCE_VAR_DIR"]) / "keys", generate=False)
    published.write_text(json.dumps(keys.jwks(Environment.live)))

    checked = _auditor_check(out, published)
    assert (checked.returncode, checked.stdout.startswith("OK")) == (0, True), checked.stdout + checked.stderr
    index = archive.read("index.csv")
    token = archive.read("index.jws").decode()
    assert (
        jwt.api_jws.decode_complete(
            token, key=jwt.PyJWKSet.from_dict(keys.jwks(Environment.live)).keys[-1], algorithms=["EdDSA"]
        )["payload"]
        == index
    ), "PyJWT agrees: it signs index.csv"
    assert json.loads(archive.read("jwks.json")) == keys.jwks(Environment.live), "the one key that signed"

    gone = rows[0]
    without_dossier = _rewritten(out, tmp_path / "without-dossier.zip", {gone["pdf"], gone["json"]})
    failed = _auditor_check(without_dossier, published)
    assert failed.returncode == 1
    assert f"FAILED: {gone['pdf']} is in the index but not in the zip" in failed.stdout

    lines = index.decode().splitlines(keepends=True)
    shorter = "".join(line for line in lines if gone["classification_id"] not in line).encode()
    without_line = _rewritten(out, tmp_path / "without-line.zip", {gone["pdf"], gone["json"]}, shorter)
    failed = _auditor_check(without_line, published)
    assert (failed.returncode, failed.stdout.strip()) == (1, "FAILED: index.jws is not a signature over this index.csv")

    extra = _rewritten(out, tmp_path / "extra.zip", set())
    with zipfile.ZipFile(extra, "a") as appended:
        appended.writestr("dossiers/2026-03-10/slipped-in.pdf", b"%PDF-1.7")
    assert "FAILED: dossiers/2026-03-10/slipped-in.pdf is not in the index" in _auditor_check(extra).stdout


async def test_every_member_is_deflated_and_the_texts_tell_an_auditor_what_to_trust_in_four_languages(
    cli_env: dict[str, str], audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    out = await _two_dossiers(cli_env, audit, sessionmaker, tmp_path)
    rows, archive = _members(out)
    assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_DEFLATED}

    keys = SigningKeys(Path(cli_env["COMPLIANCE_VAR_DIR"]) / "keys", generate=False)
    signer = keys.pdf_signer(Environment.live)
    assert archive.read("signing-certificate.pem") == signer.certificate_pem
    kid = str(keys.signing_key(Environment.live).kid)
    for language, words in {
        "en": "Trust the keys",
        "nl": "Vertrouw",
        "fr": "Faites confiance",
        "de": "Vertrauen",
    }.items():
        text = archive.read(f"VERIFY-{language}.txt").decode()
        assert words in text
        assert signer.fingerprint in text, language
        assert kid in text, language
        assert "2026-03-10" in text, language
        assert "/.well-known/jwks.json" in text, language
        assert "/.well-known/dossier-certificates.pem" in text, language
        assert "$" not in text, f"{language}: every placeholder filled"

    trusted = list(load_certs_from_pemder_data(signer.certificate_pem))
    for row in rows:
        [signature] = PdfFileReader(io.BytesIO(archive.read(row["pdf"]))).embedded_signatures
        status = await async_validate_pdf_signature(signature, ValidationContext(trust_roots=trusted))
        assert (status.intact, status.valid, status.trusted) == (True, True, True)


async def test_a_second_export_to_the_same_file_while_one_runs_fails_clearly(
    cli_env: dict[str, str], audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    owner = await create_user(sessionmaker)
    await _classify(audit, owner, Environment.live, DAY, {"engagement": {}})
    folder = tmp_path / "exports"
    folder.mkdir()
    out = folder / "audit.zip"
    running = _locked_draft(folder / ".audit.zip.part", out)  # what a running export holds

    try:
        code, _, stderr = await _export(cli_env, "--from", "2026-03-10", "--to", "2026-03-10", "--out", str(out))
        assert code == 1
        assert f"error: another export to {out} is running" in stderr
        assert not out.exists()
    finally:
        running.close()

    code, _, stderr = await _export(cli_env, "--from", "2026-03-10", "--to", "2026-03-10", "--out", str(out))
    assert code == 0, stderr
    assert [path.name for path in await asyncio.to_thread(lambda: list(folder.iterdir()))] == ["audit.zip"], (
        "the lock leaves nothing behind"
    )
