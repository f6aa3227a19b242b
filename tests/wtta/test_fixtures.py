from __future__ import annotations

import json
from pathlib import Path

from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from typer.testing import CliRunner

from compliance_api.cli import app
from compliance_api.demo.fixtures import create_demo
from compliance_api.openapi.contract import DESCRIPTION
from compliance_api.wtta.fixtures import SANDBOX_ADMISSIONS, SANDBOX_SOURCE
from compliance_api.wtta.models import AdmissionStatus
from tests.conftest import SECRET, commits
from tests.factories import bearer

WTTA_GUIDE = Path(__file__).parents[2] / "docs" / "integrate" / "wtta.md"


def test_one_fixture_per_status_documented_in_the_guide_and_contract() -> None:
    assert set(SANDBOX_ADMISSIONS) == set(AdmissionStatus)
    guide = WTTA_GUIDE.read_text()
    for status, (kvk, *_) in SANDBOX_ADMISSIONS.items():
        assert f"| `{kvk}` | `{status}` |" in guide
        assert f"| `{kvk}` | `{status}` |" in DESCRIPTION


def test_demo_json_prints_the_fixtures(database_url: str, var_dir: Path, engine: object) -> None:
    env = {
        "DATABASE_URL": database_url,
        "REDIS_URL": "",
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": str(var_dir),
    }
    for _ in range(2):  # demo is re-runnable
        result = CliRunner().invoke(app, ["demo", "--json"], env=env)
        assert result.exit_code == 0
        assert json.loads(result.stdout)["fixtures"]["wtta"] == {s.value: v[0] for s, v in SANDBOX_ADMISSIONS.items()}


@commits
async def test_fixtures_answer_in_the_sandbox_only(
    client: AsyncClient, sandbox_client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    async with sessionmaker.begin() as session:
        demo = await create_demo(session, pepper=pepper)
    for status, kvk in demo.fixtures["wtta"].items():
        body = (
            await sandbox_client.get("/v1/wtta/lookup", params={"kvk": kvk}, headers=bearer(demo.test_token))
        ).json()
        assert (body["admission_status"], body["source"]) == (status, SANDBOX_SOURCE)
        live = await client.get("/v1/wtta/lookup", params={"kvk": kvk}, headers=bearer(demo.live_token))
        assert live.status_code == 404
