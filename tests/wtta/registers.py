"""Register files and imports for the WTTA tests (through the real parser and service)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.kit.environment import Environment
from compliance_api.wtta import register_import
from compliance_api.wtta.register_file import FIELDS, read_rows
from compliance_api.wtta.register_import import ImportSource, RegisterImportResult

HEADER = ",".join(FIELDS)


def register_csv(*lines: str) -> bytes:
    """A CSV register: the header plus the given data lines."""
    return ("\n".join([HEADER, *lines]) + "\n").encode()


def row(kvk: str, status: str = "admitted", *, name: str = "Acme B.V.", number: str = "NAU-1") -> str:
    return f"{kvk},{name},{status},{number},2027-01-01,"


def register_json(*records: dict[str, str | None]) -> bytes:
    """A JSON register: an array of objects with the CSV's fields."""
    return json.dumps(list(records), indent=1).encode()


def record(
    kvk: str, status: str = "admitted", *, name: str = "Acme B.V.", number: str | None = "NAU-1"
) -> dict[str, str | None]:
    """`row` as a JSON register object."""
    return dict(zip(FIELDS, (kvk, name, status, number, "2027-01-01", None), strict=True))


async def import_file(
    sessionmaker: async_sessionmaker[AsyncSession],
    content: bytes,
    *,
    environment: Environment = Environment.live,
    full: bool = False,
    source: str = "test register",
    source_url: str | None = None,
) -> RegisterImportResult:
    async with sessionmaker.begin() as session:
        return await register_import.import_rows(
            session,
            environment=environment,
            rows=read_rows(io.BytesIO(content)),
            origin=ImportSource(location="test.csv", source=source, source_url=source_url),
            full=full,
        )


async def import_lines(
    sessionmaker: async_sessionmaker[AsyncSession], lines: Sequence[str], **options: object
) -> RegisterImportResult:
    return await import_file(sessionmaker, register_csv(*lines), **options)  # type: ignore[arg-type]
