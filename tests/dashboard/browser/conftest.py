"""A real server and Debian's Chromium driven by Playwright (never a downloaded browser); screenshots as artefacts."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from compliance_api.config import Settings
from compliance_api.db import create_engine
from compliance_api.models import Base
from tests.conftest import database_of_the_module, require_program
from tests.servers import server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"
T = TypeVar("T")


def run_async(work: Coroutine[Any, Any, T]) -> T:
    """Run database set-up beside Playwright, whose sync API keeps an event loop running in this thread."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, work).result()


async def _clear(database_url: str) -> None:
    engine = create_engine(Settings(database_url=database_url).resolved_database_url)
    async with engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            await connection.execute(table.delete())
    await engine.dispose()


database_url = pytest.fixture(scope="module", name="database_url")(database_of_the_module)


@pytest.fixture(scope="module")
def live_server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`compliance_api` served by uvicorn on a free port, on the suite's database; emptied again afterwards.

    Without Redis: its sign-up throttle would carry attempts from run to run (all from 127.0.0.1); the throttle's
    Redis backend is tested in tests/dashboard/test_throttle.py."""
    var_dir = tmp_path_factory.mktemp("browser-var")
    try:
        with server(database_url=database_url, redis_url="", var_dir=str(var_dir)) as url:
            yield url
    finally:
        run_async(_clear(database_url))


@pytest.fixture(scope="module")
def chromium(database_url: str) -> Iterator[Browser]:
    """One browser for the module; closed with it, so that Playwright's event loop ends before async tests run.
    (Asks for `database_url` so that the suite's database is migrated before that loop starts.)"""
    require_program(CHROMIUM, "install it with `apt-get install chromium` (.ci/run does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def context(chromium: Browser, live_server: str) -> Iterator[BrowserContext]:
    opened = chromium.new_context(base_url=live_server, viewport={"width": 1200, "height": 800})
    opened.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server)
    yield opened
    opened.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    """A tab that fails the test on any Content-Security-Policy violation or script error."""
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    opened.on("pageerror", lambda error: problems.append(str(error)))
    yield opened
    assert problems == []


UNLABELLED_FIELDS = """() => Array.from(document.querySelectorAll("input:not([type=hidden]), select, textarea"))
    .filter((field) => field.labels.length === 0 && !field.getAttribute("aria-label"))
    .map((field) => field.outerHTML)"""


def screenshot(page: Page, name: str) -> None:
    """Save the page as `test-artifacts/screenshots/<name>.png`, after checking that every field has a label."""
    assert page.evaluate(UNLABELLED_FIELDS) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
