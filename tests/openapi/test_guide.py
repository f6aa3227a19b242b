"""The guide: built strictly by mkdocs, complete where it lists the service's own catalogue, served at /guide/."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from httpx import ASGITransport, AsyncClient
from sqlalchemy.ext.asyncio import AsyncEngine

from compliance_api.app import create_app
from compliance_api.config import Settings
from compliance_api.errors import ERROR_CATALOGUE

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built_guide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`mkdocs build --strict` of the repository's guide: a broken link or a missing page fails it."""
    site = tmp_path_factory.mktemp("guide")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr
    return site


@pytest.fixture
async def guide_client(settings: Settings, engine: AsyncEngine, built_guide: Path) -> AsyncIterator[AsyncClient]:
    app: FastAPI = create_app(settings.model_copy(update={"guide_dir": built_guide}))
    async with (
        app.router.lifespan_context(app),
        AsyncClient(transport=ASGITransport(app=app), base_url="http://127.0.0.1:8000") as client,
    ):
        yield client


async def test_the_built_guide_is_served_at_guide(guide_client: AsyncClient) -> None:
    home = await guide_client.get("/guide/")
    assert home.status_code == 200
    assert "text/html" in home.headers["content-type"]
    assert "Integrator&#39;s guide" in home.text or "Integrator's guide" in home.text
    for page in ("integrate/errors/", "integrate/authentication/", "operate/runbooks/", "changelog/"):
        assert (await guide_client.get(f"/guide/{page}")).status_code == 200, page
    bare = await guide_client.get("/guide")
    assert bare.status_code == 307
    assert bare.headers["location"] == "/guide/"


def test_the_built_guide_loads_nothing_from_other_hosts(built_guide: Path) -> None:
    """Served offline: no web fonts, scripts or styles from the internet."""
    remote = re.compile(r"""(?:src|href)=["']?(?:https?:)?//""")
    offenders = [
        str(page.relative_to(built_guide))
        for page in built_guide.rglob("*.html")
        if any("stylesheet" in tag or "<script" in tag for tag in _tags_with_remote(page.read_text(), remote))
    ]
    assert offenders == []


def _tags_with_remote(html: str, remote: re.Pattern[str]) -> list[str]:
    return [tag for tag in re.findall(r"<(?:link|script)[^>]*>", html) if remote.search(tag)]


async def test_without_a_build_guide_says_how_to_make_one(
    settings: Settings, engine: AsyncEngine, tmp_path: Path
) -> None:
    app = create_app(settings.model_copy(update={"guide_dir": tmp_path / "absent"}))
    async with AsyncClient(transport=ASGITransport(app=app), base_url="http://127.0.0.1:8000") as client:
        answer = await client.get("/guide/")
    assert answer.status_code == 404
    assert "make docs" in answer.text


async def test_docs_links_to_the_guide_and_its_changelog(client: AsyncClient) -> None:
    contract = (await client.get("/openapi.json")).json()
    assert "](/guide/)" in contract["info"]["description"]
    assert "](/guide/changelog/)" in contract["info"]["description"]


def test_every_error_code_is_in_the_integrators_guide() -> None:
    guide = (ROOT / "docs" / "integrate" / "errors.md").read_text()
    missing = [code for code in ERROR_CATALOGUE if f"| `{code}` |" not in guide]
    assert missing == [], f"add these codes to docs/integrate/errors.md: {missing}"
