"""What the dossier tests share: reading a PDF's text and attachment, and checking a JWS with PyJWT.

PyJWT is not what the service signs with (joserfc), so a verification here is an independent one.
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path
from typing import Any

import jwt
import pytest
from httpx import AsyncClient
from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.classify.conftest import Account, make_account
from tests.conftest import require_program

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "dossiers"


def pdf_text(pdf: bytes) -> str:
    """The PDF's text as pdftotext reads it (in reading order), without the page footers (each page's last two
    lines), with runs of blanks made one."""
    require_program("/usr/bin/pdftotext", "apt-get install poppler-utils")
    done = subprocess.run(["/usr/bin/pdftotext", "-", "-"], input=pdf, capture_output=True, check=True, timeout=60)
    pages = [[line for line in page.splitlines() if line.strip()] for page in done.stdout.decode().split("\f")]
    return " ".join(" ".join(line for page in pages for line in page[:-2]).split())


def attached_jws(pdf: bytes) -> str:
    reader = PdfReader(io.BytesIO(pdf))
    [content] = reader.attachments["dossier.jws"]
    return content.decode()


def attachment_description(pdf: bytes) -> str:
    """The description a PDF reader shows beside the attached JWS."""
    files = PdfReader(io.BytesIO(pdf)).root_object["/AF"]
    assert isinstance(files, ArrayObject)
    [attached] = files
    filespec = attached.get_object()
    assert isinstance(filespec, DictionaryObject)
    return str(filespec["/Desc"])


async def verify_jws(client: AsyncClient, token: str, host: str | None = None) -> dict[str, Any]:
    """The JWS's payload, verified with PyJWT against the JWKS the same host publishes."""
    headers = {"Host": host} if host else {}
    keys = jwt.PyJWKSet.from_dict((await client.get("/.well-known/jwks.json", headers=headers)).json())
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in keys.keys if k.key_id == kid)
    payload: dict[str, Any] = jwt.decode(token, key=key, algorithms=["EdDSA"])
    return payload


def save_first_page(pdf: bytes, name: str) -> Path:
    """The PDF's first page as `test-artifacts/dossiers/<name>.png` (pdftoppm), to look at."""
    require_program("/usr/bin/pdftoppm", "apt-get install poppler-utils")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    source = ARTIFACTS / f"{name}.pdf"
    source.write_bytes(pdf)
    subprocess.run(
        [
            "/usr/bin/pdftoppm",
            "-png",
            "-r",
            "80",
            "-f",
            "1",
            "-l",
            "1",
            "-singlefile",
            str(source),
            str(ARTIFACTS / name),
        ],
        check=True,
        timeout=60,
    )
    return ARTIFACTS / f"{name}.png"


@pytest.fixture
async def account(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> Account:
    return await make_account(sessionmaker, pepper)
