"""`compliance-api classify bulk`: a CSV in, the same CSV with id, verdict, score and error out; every verdict kept."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify.models import Classification
from compliance_api.classify.ruleset import ENGAGEMENT_FIELDS
from tests.cli.conftest import invoke
from tests.factories import create_user

HEADER = ",".join(("reference", *ENGAGEMENT_FIELDS))
ROWS = [
    "c-1,95,12,5,0,true,true,false,false,false",
    "c-2,-5,12,5,0,yes,yes,no,no,no",
    "c-3,120,3,2,6,1,1,1,1,1",
    "c-4,abc,12,5,0,maybe,true,false,false,false",
]


def _results(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


async def test_bulk_classifies_each_row_and_names_the_errors_of_the_others(
    cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    user = await create_user(sessionmaker)
    source, out = tmp_path / "contractors.csv", tmp_path / "verdicts.csv"
    source.write_text("\n".join([HEADER, *ROWS]) + "\n", encoding="utf-8")
    code, stdout, stderr = await asyncio.to_thread(
        invoke, cli_env, "classify", "bulk", str(source), "--out", str(out), "--email", user.email
    )
    assert code == 0, stderr
    assert "4 rows, 2 classified" in stdout
    results = _results(out)
    assert [r["reference"] for r in results] == ["c-1", "c-2", "c-3", "c-4"]
    assert [bool(r["verdict"]) for r in results] == [True, False, True, False]
    assert "hourly_rate_eur" in results[1]["error"]
    assert "items.3.engagement.hourly_rate_eur" in results[3]["error"]
    assert "items.3.engagement.own_tools" in results[3]["error"]
    async with sessionmaker() as session:
        kept = {str(row.id): (row.reference, row.user_id) for row in await session.scalars(select(Classification))}
    assert kept == {r["id"]: (r["reference"], user.id) for r in results if r["id"]}


async def test_bulk_refuses_a_file_with_unknown_columns_and_writes_nothing(
    cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    user = await create_user(sessionmaker)
    source, out = tmp_path / "contractors.csv", tmp_path / "verdicts.csv"
    source.write_text("reference,hourly_rate,tarief\nx,95,1\n", encoding="utf-8")
    code, _, stderr = await asyncio.to_thread(
        invoke, cli_env, "classify", "bulk", str(source), "--out", str(out), "--email", user.email
    )
    assert code == 1
    assert "unknown columns ['hourly_rate', 'tarief']" in stderr
    assert not out.exists()
    async with sessionmaker() as session:
        assert list(await session.scalars(select(Classification))) == []


async def test_bulk_judges_under_the_law_of_as_of(
    cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    """EUR 37, every criterion favourable: safe under the 2025 threshold (36), not under today's (38)."""
    user = await create_user(sessionmaker)
    source = tmp_path / "one.csv"
    source.write_text(HEADER + "\nc-37,37,3,2,5,true,true,true,true,true\n", encoding="utf-8")
    verdicts = {}
    for as_of in ("2025-03-01", "2026-11-25"):
        out = tmp_path / f"{as_of}.csv"
        args = ("classify", "bulk", str(source), "--out", str(out), "--email", user.email, "--as-of", as_of)
        code, _, stderr = await asyncio.to_thread(invoke, cli_env, *args)
        assert code == 0, stderr
        verdicts[as_of] = _results(out)[0]["verdict"]
    assert verdicts["2025-03-01"] == "safe"
    assert verdicts["2026-11-25"] != "safe"
