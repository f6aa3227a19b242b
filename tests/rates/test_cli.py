from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from typer.testing import CliRunner

from compliance_api.cli import app
from compliance_api.cli.common import progress
from compliance_api.kit.environment import Environment
from compliance_api.rates.models import RateBenchmark, RateImport, RateObservation

HEADER = "sector,region,hourly_rate_eur,observed_on\n"


async def invoke(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """Run the CLI in a thread: it starts its own event loop."""
    result = await asyncio.to_thread(CliRunner().invoke, app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


async def count(
    sessionmaker: async_sessionmaker[AsyncSession],
    model: type[RateImport] | type[RateObservation] | type[RateBenchmark],
    env: Environment,
) -> int:
    async with sessionmaker() as session:
        found = await session.scalar(select(func.count()).select_from(model).where(model.environment == env))
        return int(found or 0)


def write(tmp_path: Path, name: str, rows: list[str]) -> Path:
    path = tmp_path / name
    path.write_text(HEADER + "".join(r + "\n" for r in rows))
    return path


async def test_import_then_reimport_is_idempotent(
    cli_env: dict[str, str], tmp_path: Path, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    path = write(tmp_path, "rates.csv", [f"ict,NL-UT,{50 + i},2026-01-{i + 1:02d}" for i in range(12)])
    code, out, _ = await invoke(cli_env, "rates", "import", str(path), "--json")
    assert code == 0
    assert json.loads(out) | {"import_id": ""} == {
        "import_id": "",
        "rows": 12,
        "already_imported": False,
        "benchmarks_recomputed": 2,
        "environment": "live",
    }
    code, out, _ = await invoke(cli_env, "rates", "import", str(path), "--json")
    assert (code, json.loads(out)["already_imported"]) == (0, True)
    assert await count(sessionmaker, RateObservation, Environment.live) == 12
    assert await count(sessionmaker, RateObservation, Environment.test) == 0
    code, _, err = await invoke(cli_env, "rates", "import", str(path), "--env", "test")
    assert (code, err.strip()) == (0, "imported 12 rows into sandbox; 2 benchmarks recomputed")


async def test_a_bad_row_changes_nothing_and_is_named(
    cli_env: dict[str, str], tmp_path: Path, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    path = write(
        tmp_path, "rates.csv", ["ict,NL-UT,50,2026-01-01", "ict,NL-UT,50,2026-01-01", "ict,NL-ZZ,50,2026-01-01"]
    )
    code, out, err = await invoke(cli_env, "rates", "import", str(path))
    assert (code, out) == (1, "")
    assert (
        err.strip()
        == "error: line 4, field region: 'NL-ZZ' is not NL or an ISO 3166-2:NL province code (NL-NH, NL-UT, …)"
    )
    assert await count(sessionmaker, RateImport, Environment.live) == 0
    assert await count(sessionmaker, RateObservation, Environment.live) == 0


async def test_json_files_are_imported(
    cli_env: dict[str, str], tmp_path: Path, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    path = tmp_path / "rates.json"
    path.write_text(
        json.dumps([{"sector": "legal", "region": "NL", "hourly_rate_eur": 120.5, "observed_on": "2026-03-01"}])
    )
    code, _, _ = await invoke(cli_env, "rates", "import", str(path))
    assert code == 0
    assert await count(sessionmaker, RateBenchmark, Environment.live) == 1


async def test_a_missing_file_is_a_clear_error(cli_env: dict[str, str], tmp_path: Path) -> None:
    code, _, err = await invoke(cli_env, "rates", "import", str(tmp_path / "nope.csv"))
    assert code == 1
    assert err.startswith("error: cannot read")


async def test_synthetic_data_stays_out_of_production_unless_asked(
    cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    code, _, err = await invoke(cli_env, "rates", "generate", "--env", "live")
    assert (code, err.strip()) == (1, "error: synthetic observations go into production only with --allow-synthetic")
    assert await count(sessionmaker, RateObservation, Environment.live) == 0
    code, out, _ = await invoke(cli_env, "rates", "generate", "--as-of", "2026-06-30", "--json")
    first = json.loads(out)
    assert (code, first["environment"], first["seed"]) == (0, "test", 20260709)
    code, out, _ = await invoke(cli_env, "rates", "generate", "--as-of", "2026-06-30", "--json")
    assert json.loads(out) == first, "same seed, same rows; a rerun replaces the earlier run"
    assert await count(sessionmaker, RateObservation, Environment.test) == first["rows"]
    assert await count(sessionmaker, RateImport, Environment.test) == 1
    code, _, _ = await invoke(
        cli_env, "rates", "generate", "--env", "live", "--allow-synthetic", "--as-of", "2026-06-30"
    )
    assert code == 0
    assert await count(sessionmaker, RateObservation, Environment.live) == first["rows"]


async def test_generate_refuses_a_bad_date(cli_env: dict[str, str]) -> None:
    code, _, err = await invoke(cli_env, "rates", "generate", "--as-of", "soon")
    assert (code, err.strip()) == (1, "error: --as-of 'soon' is not a date (YYYY-MM-DD)")


async def test_recompute_rebuilds_every_benchmark(cli_env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path, "rates.csv", ["ict,NL-UT,50,2026-01-01", "legal,NL-ZH,90,2026-01-01"])
    await invoke(cli_env, "rates", "import", str(path))
    code, out, _ = await invoke(cli_env, "rates", "recompute", "--json")
    assert (code, json.loads(out)) == (0, {"benchmarks": 4, "environment": "live"})


async def test_demo_fills_the_sandbox_with_synthetic_rates(
    cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    code, out, _ = await invoke(cli_env, "demo", "--json")
    assert code == 0
    rates = json.loads(out)["fixtures"]["rates"]
    assert rates["synthetic_observations"] == await count(sessionmaker, RateObservation, Environment.test) > 1000
    assert await count(sessionmaker, RateObservation, Environment.live) == 0


def test_progress_shows_only_on_a_terminal_for_long_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    with progress(1_000_000, "importing") as update:
        assert update is None, "pytest's stderr is not a terminal"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with progress(100, "importing") as update:
        assert update is None, "short imports need no bar"
    with progress(20_000, "importing") as update:
        assert update is not None
        update(20_000)
