"""The dossier PDF as Typst sets it: a client's text only ever as text, every character the dossier uses in either set
of fonts, PDF/A-3u, one compiler per thread, the same bytes for the same dossier, and the printed verify line."""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from httpx import AsyncClient
from pypdf import PdfReader
from pypdf.generic import ArrayObject, Destination, DictionaryObject, IndirectObject

from compliance_api.classify.language import Language
from compliance_api.dossier.render import typeset, verify_command
from compliance_api.dossier.schemas import Dossier
from compliance_api.dossier.texts import dossier_texts
from compliance_api.dossier.typeset import FONT_DIRS, Typesetter
from tests.classify.conftest import Account
from tests.conftest import require_program
from tests.dossier.conftest import attached_jws, pdf_text, verify_jws

ZW = "/v1/classify/zelfstandigenwet"
A4 = (595.28, 841.89)
SECTIONS = ("title", "engagement", "asked", "verdict", "questions", "criteria", "ruleset", "history", "verification")
# What a Typst document would act on if it were read as markup: code, imports, file reads, attachments, set rules,
# headings, labels, references, raw text, maths, escapes and brackets.
REFERENCE = '#import "/etc/passwd": * *bold* _emph_ $x^2$ \\ <lbl> @lbl `raw` [#read("/etc/passwd")]'
METADATA = {
    "#set page(width: 1cm)": '#read("/etc/passwd") #pagebreak() #pdf.attach("x.txt", bytes("x"))',
    "= Injected heading": ']] [[ ``` `` $ $ <a> @a *b* _c_ #{1 + 1} #eval("2") \\ #text(red)[red]',
}
# Every character beyond ASCII that the rulesets and the dossier's texts use, the ones the template adds (→, …), and
# what Dutch, French and German clients write (€, ≥, quotes, œ).
TEMPLATE_AND_CLIENT_CHARACTERS = "→…€≥“”‘’„«»éèêëüöäßœŒçàâîïôûù§°–—"


def _dossier_characters() -> str:
    files = [*resources.files("compliance_api.classify").joinpath("rulesets").iterdir()]
    files.append(resources.files("compliance_api.dossier").joinpath("texts.json"))
    used = {character for file in files for character in file.read_text(encoding="utf-8") if ord(character) > 127}
    return "".join(sorted(used | set(TEMPLATE_AND_CLIENT_CHARACTERS)))


def _flat(text: str) -> str:
    """Without blanks or hyphens: where pdftotext breaks a line, it adds a blank, and it drops a hyphen ending one."""
    return "".join(text.split()).replace("-", "")


def _outline(entries: list[Any]) -> Iterator[str]:
    for entry in entries:
        if isinstance(entry, Destination):
            yield str(entry.title)
        else:
            yield from _outline(entry)


def _dictionary(value: object) -> DictionaryObject:
    resolved = value.get_object() if isinstance(value, IndirectObject) else value
    assert isinstance(resolved, DictionaryObject)
    return resolved


def _fonts(pdf: bytes) -> set[str]:
    """The families of the fonts the PDF embeds, without their subset tags."""
    found = set()
    for page in PdfReader(io.BytesIO(pdf)).pages:
        for font in _dictionary(_dictionary(page["/Resources"])["/Font"]).values():
            found.add(str(_dictionary(font)["/BaseFont"]).split("+", 1)[-1].split("-", 1)[0])
    return found


def _pdf_a_part(pdf: bytes) -> tuple[str, str] | None:
    """PDF/A part and conformance as the document's XMP metadata declares them, if it does."""
    metadata = PdfReader(io.BytesIO(pdf)).xmp_metadata
    assert metadata is not None
    xmp = metadata.stream.get_data().decode()
    # Typst writes them as elements; pyHanko, signing, rewrites them as attributes (RDF allows either)
    part = re.search(r"<pdfaid:part>(\d)</pdfaid:part>|pdfaid:part=\"(\d)\"", xmp)
    conformance = re.search(r"<pdfaid:conformance>(\w)</pdfaid:conformance>|pdfaid:conformance=\"(\w)\"", xmp)
    if part is None or conformance is None:
        return None
    return part[1] or part[2], conformance[1] or conformance[2]


def _attached_file(pdf: bytes) -> DictionaryObject:
    """The document's one associated file (PDF/A-3's `/AF`)."""
    files = PdfReader(io.BytesIO(pdf)).root_object["/AF"]
    assert isinstance(files, ArrayObject)
    [attached] = files
    return _dictionary(attached)


async def _signed(client: AsyncClient, account: Account, body: dict[str, Any]) -> tuple[Dossier, str]:
    made = await client.post(ZW, json={"engagement": {"hourly_rate_eur": 80}, **body}, headers=account.live)
    assert made.status_code == 200, made.text
    signed = (await client.get(f"/v1/classifications/{made.json()['id']}/dossier", headers=account.live)).json()
    return Dossier.model_validate(signed["dossier"]), signed["jws"]


async def _pdf(client: AsyncClient, account: Account, body: dict[str, Any]) -> bytes:
    made = await client.post(ZW, json={"engagement": {"hourly_rate_eur": 80}, **body}, headers=account.live)
    assert made.status_code == 200, made.text
    answer = await client.get(f"/v1/classifications/{made.json()['id']}/dossier?format=pdf", headers=account.live)
    assert answer.status_code == 200, answer.text
    return answer.content


async def test_typst_markup_in_the_reference_and_metadata_is_printed_as_written_and_does_nothing(
    client: AsyncClient, account: Account
) -> None:
    pdf = await _pdf(client, account, {"reference": REFERENCE, "metadata": METADATA})

    text = _flat(pdf_text(pdf))
    for written in (REFERENCE, *METADATA, *METADATA.values()):
        assert _flat(written) in text, written
    assert "root:" not in text, "no file was read"
    reader = PdfReader(io.BytesIO(pdf))
    assert list(reader.attachments) == ["dossier.jws"], "nothing else was attached"
    assert {(round(float(p.mediabox.width), 2), round(float(p.mediabox.height), 2)) for p in reader.pages} == {A4}
    texts = dossier_texts().of(Language.en)
    assert list(_outline(reader.outline)) == [texts[section] for section in SECTIONS], "no heading was added"
    assert (await verify_jws(client, attached_jws(pdf)))["reference"] == REFERENCE


async def test_every_character_the_dossier_uses_is_set_with_dejavu_or_with_typst_s_own_fonts(
    client: AsyncClient, account: Account
) -> None:
    characters = _dossier_characters()
    dossier, jws = await _signed(client, account, {"reference": characters, "metadata": {"note": characters}})
    require_program(str(FONT_DIRS[0] / "DejaVuSans.ttf"), "apt-get install fonts-dejavu-core")

    for fonts, family in ((FONT_DIRS, "DejaVuSans"), ((), "LibertinusSerif")):
        done = typeset(dossier, jws, Typesetter(fonts))
        # PDF/A refuses a character no font has a glyph for: the archival standard shows every one was set.
        assert (done.standard, _pdf_a_part(done.pdf), done.warnings) == ("a-3u", ("3", "U"), []), family
        assert family in _fonts(done.pdf)
        text = pdf_text(done.pdf)
        assert text.count(characters) == 3, "the subtitle, the reference and the metadata, each as sent"
        assert "Dutch test (Zelfstandigenwet)" in text


async def test_a_character_no_font_has_makes_a_plain_pdf_not_a_failed_one(
    client: AsyncClient, account: Account
) -> None:
    archival = await _pdf(client, account, {"reference": "contract 7"})
    assert _pdf_a_part(archival) == ("3", "U")
    attachment = _attached_file(archival)
    assert (str(attachment["/F"]), str(attachment["/AFRelationship"])) == ("dossier.jws", "/Supplement")

    # Neither DejaVu nor Typst's fonts have Chinese, and no font draws a control character: PDF/A forbids the box
    # drawn instead, so this dossier is a plain PDF, with the box, and its attached JWS carries the text as sent.
    plain = await _pdf(client, account, {"reference": "参考番号 7", "metadata": {"bell": "a\x07b"}})
    assert _pdf_a_part(plain) is None
    assert "Dutch test (Zelfstandigenwet)" in pdf_text(plain)
    signed = await verify_jws(client, attached_jws(plain))
    assert (signed["reference"], signed["metadata"]) == ("参考番号 7", {"bell": "a\x07b"})


async def test_a_reference_with_characters_xml_cannot_carry_is_signed_and_shown_as_sent(
    client: AsyncClient, account: Account
) -> None:
    # The reference is part of the PDF's title, which its XMP metadata (XML) repeats: every C0 control character, the
    # vertical tab schemathesis once sent among them, must not stop the PDF from being signed.
    controls = "".join(chr(code) for code in range(1, 32) if chr(code) not in "\t\n\r")  # NUL is refused (400)
    reference = f"ref{controls}end"
    pdf = await _pdf(client, account, {"reference": reference})
    information = PdfReader(io.BytesIO(pdf)).metadata
    assert information is not None
    assert (information.title or "").endswith("refend")
    signed = await verify_jws(client, attached_jws(pdf))
    assert signed["reference"] == reference


async def test_threads_typeset_at_once_each_with_its_own_compiler(client: AsyncClient, account: Account) -> None:
    dossier, jws = await _signed(client, account, {"reference": "shared"})
    at_once = threading.Barrier(4)

    def read_back(index: int) -> list[str]:
        at_once.wait()
        mine = dossier.model_copy(update={"reference": f"thread-{index}"})
        return [pdf_text(typeset(mine, jws).pdf) for _ in range(3)]

    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(read_back, range(4)))
    for index, texts in enumerate(done):
        assert all(f"thread-{index}" in text for text in texts)


async def test_the_same_dossier_gives_the_same_bytes_dated_when_it_was_issued(
    client: AsyncClient, account: Account
) -> None:
    dossier, jws = await _signed(client, account, {"reference": "twice"})
    first, second = (typeset(dossier, jws, Typesetter()).pdf for _ in range(2))
    assert first == second
    information = PdfReader(io.BytesIO(first)).metadata
    assert information is not None
    assert information.creation_date == dossier.issued_at.replace(microsecond=0)


async def test_the_printed_verify_line_checks_the_attached_jws_when_run_as_printed(
    client: AsyncClient, sandbox_client: AsyncClient, account: Account, tmp_path: Path
) -> None:
    pdf = await _pdf(client, account, {"reference": "verify me"})
    payload = await verify_jws(client, attached_jws(pdf))
    printed = verify_command(payload["verification"]["jwks_url"])
    assert _flat(printed) in _flat(pdf_text(pdf)), "the PDF prints the line"

    (tmp_path / "dossier.pdf").write_bytes(pdf)
    production, sandbox = tmp_path / "jwks.json", tmp_path / "sandbox-jwks.json"
    production.write_bytes((await client.get("/.well-known/jwks.json")).content)
    sandbox.write_bytes((await sandbox_client.get("/.well-known/jwks.json")).content)

    with _serving(tmp_path) as base_url:  # the printed line, with the keys served from a folder
        checked = _run(verify_command(f"{base_url}/{production.name}"), tmp_path)
        refused = _run(verify_command(f"{base_url}/{sandbox.name}"), tmp_path)  # keys that did not sign it
    assert checked.returncode == 0, checked.stderr
    assert ast.literal_eval(checked.stdout) == payload
    assert (refused.returncode, refused.stdout) == (1, ""), refused.stderr


@contextlib.contextmanager
def _serving(folder: Path) -> Iterator[str]:
    """The folder over HTTP on a free local port (PyJWT fetches keys over HTTP only)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(SimpleHTTPRequestHandler, directory=folder))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _run(line: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """The one-line check as a shell runs it, with this interpreter (it has PyJWT and pypdf) as `python3`."""
    assert line.startswith("python3 ")
    command = shlex.quote(sys.executable) + line.removeprefix("python3")
    return subprocess.run(["/bin/sh", "-c", command], cwd=folder, capture_output=True, text=True, timeout=60)
