from __future__ import annotations

import asyncio
import hashlib
import io
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from typer.testing import CliRunner

from compliance_api.cli import app
from compliance_api.cli.wtta import make_progress
from compliance_api.kit.environment import Environment
from compliance_api.wtta import service
from compliance_api.wtta.models import WttaImport
from tests.wtta.registers import record, register_csv, register_json, row

Maker = async_sessionmaker[AsyncSession]


def etag_of(body: bytes) -> str:
    return f'"{hashlib.sha256(body).hexdigest()[:16]}"'


LAST_MODIFIED = "Mon, 02 Nov 2026 08:00:00 GMT"


def invoke(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


async def invoke_async(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """The CLI runs its own event loop, so from an async test it runs in a thread."""
    return await asyncio.to_thread(invoke, env, *args)


def write(tmp_path: Path, content: bytes, name: str = "register.csv") -> str:
    path = tmp_path / name
    path.write_bytes(content)
    return str(path)


async def status_of(sessionmaker: Maker, kvk: str, environment: Environment = Environment.live) -> str | None:
    async with sessionmaker() as session:
        found = await service.lookup(session, environment=environment, kvk_number=kvk)
    return str(found["admission_status"]) if found else None


def test_import_a_file_then_again_without_change(cli_env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path, register_csv(row("12345678"), row("87654321", "applied")))
    code, out, _ = invoke(cli_env, "wtta", "import", path, "--json", "--source", "NAU", "--env", "test")
    assert code == 0
    first = json.loads(out)
    assert (first["environment"], first["rows_created"], first["status_changes"]) == ("test", 2, 2)
    code, out, _ = invoke(cli_env, "wtta", "import", path, "--env", "test")
    assert code == 0
    assert out == "test: 2 rows read, 0 new, 0 changed (0 status changes), 2 unchanged, 0 marked missing\n"


async def test_a_bad_row_exits_1_naming_line_and_field_and_changes_nothing(
    cli_env: dict[str, str], tmp_path: Path, sessionmaker: Maker
) -> None:
    path = write(tmp_path, register_csv(row("12345678"), "87654321,Beta,maybe,,,"))
    code, out, err = await invoke_async(cli_env, "wtta", "import", path)
    assert (code, out) == (1, "")
    assert (
        err
        == "error: line 3, field admission_status: must be one of "
        + ", ".join(
            [
                "unknown",
                "applied",
                "admitted",
                "conditionally_admitted",
                "revoked",
                "suspended",
                "expired",
                "not_required",
            ]
        )
        + "\n"
    )
    assert await status_of(sessionmaker, "12345678") is None


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        (
            register_csv(row("12345678"), "87654321,Beta,admitted,A-2,0001-01-01T00:00:00+23:59,"),
            "register.csv",
            "error: line 3, field admitted_at: '0001-01-01T00:00:00+23:59' must lie between 0001-01-01T00:00:00Z "
            "and 9999-12-31T23:59:59Z (in UTC)\n",
        ),
        (
            register_csv(row("12345678"), "87654321,Beta,admitted,A-2,2026-01-01,9999-12-31T23:59:59-23:59"),
            "register.csv",
            "error: line 3, field expires_at: '9999-12-31T23:59:59-23:59' must lie between 0001-01-01T00:00:00Z "
            "and 9999-12-31T23:59:59Z (in UTC)\n",
        ),
        (
            b"[" * 100_000,
            "register.json",
            "error: line 1, record 1, field -: invalid JSON: nested too deeply "
            "(a record is one object of plain values)\n",
        ),
    ],
)
async def test_a_file_the_parser_cannot_hold_is_refused_naming_line_and_field(
    cli_env: dict[str, str], tmp_path: Path, sessionmaker: Maker, content: bytes, name: str, message: str
) -> None:
    code, out, err = await invoke_async(cli_env, "wtta", "import", write(tmp_path, content, name))
    assert (code, out, err) == (1, "", message)
    assert await status_of(sessionmaker, "12345678") is None


async def test_a_json_register_is_imported(cli_env: dict[str, str], tmp_path: Path, sessionmaker: Maker) -> None:
    content = register_json(record("12345678"), record("87654321", "suspended", name="Beta B.V.", number=None))
    path = write(tmp_path, content, "register.json")
    code, out, _ = await invoke_async(cli_env, "wtta", "import", path, "--json")
    assert code == 0
    assert (json.loads(out)["rows_read"], json.loads(out)["rows_created"]) == (2, 2)
    async with sessionmaker() as session:
        suspended = await service.lookup(session, environment=Environment.live, kvk_number="87654321")
    assert suspended is not None
    assert (
        suspended["legal_name"],
        suspended["admission_status"],
        suspended["admission_number"],
        suspended["source"],
    ) == ("Beta B.V.", "suspended", None, "register.json")
    assert await status_of(sessionmaker, "12345678") == "admitted"


async def imports_of(sessionmaker: Maker) -> list[tuple[str, str, str | None]]:
    async with sessionmaker() as session:
        runs = await session.scalars(select(WttaImport).order_by(WttaImport.finished_at))
        return [(r.location, r.source, r.source_url) for r in runs]


async def test_source_and_source_url_are_stored_on_the_rows_and_the_import(
    cli_env: dict[str, str], tmp_path: Path, sessionmaker: Maker
) -> None:
    path = write(tmp_path, register_csv(row("12345678")))
    options = ["--source", "NAU register", "--source-url", "https://nau.example/register"]
    assert (await invoke_async(cli_env, "wtta", "import", path, *options))[0] == 0
    async with sessionmaker() as session:
        admission = await service.lookup(session, environment=Environment.live, kvk_number="12345678")
        changes = await service.history(session, environment=Environment.live, kvk_number="12345678")
    assert admission is not None
    assert (admission["source"], admission["source_url"]) == ("NAU register", "https://nau.example/register")
    assert [c.source for c in changes] == ["NAU register"]
    assert await imports_of(sessionmaker) == [(path, "NAU register", "https://nau.example/register")]

    path = write(tmp_path, register_csv(row("12345678", "revoked")), "update.csv")
    assert (await invoke_async(cli_env, "wtta", "import", path))[0] == 0
    async with sessionmaker() as session:
        admission = await service.lookup(session, environment=Environment.live, kvk_number="12345678")
    assert admission is not None
    assert (admission["source"], admission["source_url"]) == ("update.csv", None), "defaults: file name, no URL"
    assert (await imports_of(sessionmaker))[1] == (path, "update.csv", None)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/register.csv"], "no such file"),
        (["{empty}", "--full"], "a --full import needs at least one row"),
        (["{file}", "--env", "staging"], "Invalid value for '--env'"),
    ],
)
def test_bad_invocations_exit_non_zero(cli_env: dict[str, str], tmp_path: Path, args: list[str], message: str) -> None:
    files = {
        "{empty}": write(tmp_path, register_csv(), "empty.csv"),
        "{file}": write(tmp_path, register_csv(row("12345678"))),
    }
    code, _, err = invoke(cli_env, "wtta", "import", *[files.get(a, a) for a in args])
    assert code != 0
    assert message in err


def test_progress_shows_on_a_terminal_only() -> None:
    terminal = Console(file=io.StringIO(), force_terminal=True, width=150)
    with make_progress(terminal, quiet=False) as progress:
        task = progress.add_task("reading", total=1000, rows=0)
        progress.update(task, advance=500, rows=12345)
    assert "12,345 rows" in terminal.file.getvalue()  # type: ignore[attr-defined]
    assert "rows/s" in terminal.file.getvalue()  # type: ignore[attr-defined]
    for console, quiet in (
        (Console(file=io.StringIO(), force_terminal=True), True),
        (Console(file=io.StringIO()), False),
    ):
        with make_progress(console, quiet=quiet) as progress:
            progress.update(progress.add_task("reading", total=10, rows=0), advance=5, rows=5)
        assert console.file.getvalue() == ""  # type: ignore[attr-defined]


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
CLOCK = r"(?:\d+:\d\d:\d\d|-:--:--)"


def test_a_real_import_shows_rows_rate_and_time_left_on_a_terminal(cli_env: dict[str, str], tmp_path: Path) -> None:
    """TTY_COMPATIBLE=1 makes rich treat stderr as a terminal, as `is_terminal` does for a real one."""
    path = write(tmp_path, register_csv(*[row(f"{10000000 + i}") for i in range(2500)]))
    terminal = {**cli_env, "TTY_COMPATIBLE": "1", "COLUMNS": "200"}
    code, out, err = invoke(terminal, "wtta", "import", path)
    assert code == 0
    assert out.startswith("live: 2500 rows read, 2500 new")
    *earlier, final = [line for line in ANSI.sub("", err).splitlines() if line.strip()]
    # columns: stage, bar, bytes, rows read and rate, elapsed, time left
    shown = re.search(rf"2,500 rows\s+[1-9][\d,]* rows/s\s+{CLOCK}\s+(?P<left>{CLOCK})\s*$", final)
    assert shown, final
    assert shown["left"] == "0:00:00", "every byte read: no time left"
    assert all(re.search(rf"rows/s\s+{CLOCK}\s+{CLOCK}\s*$", line) for line in earlier), earlier

    code, out, err = invoke(terminal, "wtta", "import", path, "--quiet")
    assert (code, err) == (0, "")
    assert out.startswith("live: 2500 rows read, 0 new")
    assert invoke(cli_env, "wtta", "import", path)[2] == "", "not a terminal: silent"


@dataclass
class Register:
    """What the local register server serves, and what it was asked."""

    body: bytes = b""
    drop_halfway: bool = False
    requests: list[dict[str, str]] = field(default_factory=list)


@pytest.fixture
def register_server() -> Iterator[tuple[str, Register]]:
    served = Register()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.requests.append(dict(self.headers))
            if self.headers.get("If-None-Match") == etag_of(served.body):
                self.send_response(304)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.send_header("Content-Length", str(len(served.body)))
            self.send_header("ETag", etag_of(served.body))
            self.send_header("Last-Modified", LAST_MODIFIED)
            self.end_headers()
            if served.drop_halfway:
                self.wfile.write(served.body[: len(served.body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(served.body)

        def log_message(self, format: str, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/register.csv", served
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


async def test_url_import_streams_then_skips_an_unchanged_register(
    cli_env: dict[str, str], register_server: tuple[str, Register], sessionmaker: Maker
) -> None:
    url, served = register_server
    served.body = register_csv(row("12345678"), row("87654321", "revoked"))
    code, out, _ = await invoke_async(cli_env, "wtta", "import", url, "--json")
    assert code == 0
    assert json.loads(out)["rows_created"] == 2
    async with sessionmaker() as session:
        admission = await service.lookup(session, environment=Environment.live, kvk_number="87654321")
    assert admission is not None
    assert (admission["source"], admission["source_url"]) == (url, url)
    assert "If-None-Match" not in served.requests[0]

    code, out, _ = await invoke_async(cli_env, "wtta", "import", url, "--json")
    assert code == 0
    assert json.loads(out)["not_modified"] is True
    assert served.requests[1]["If-None-Match"] == etag_of(served.body)
    assert served.requests[1]["If-Modified-Since"] == LAST_MODIFIED
    async with sessionmaker() as session:
        refreshed = await service.last_refreshed(session, environment=Environment.live)
        again = await service.lookup(session, environment=Environment.live, kvk_number="87654321")
    assert again is not None
    assert again["last_verified_at"] == admission["last_verified_at"], "a 304 touches no row"
    assert refreshed is not None
    assert refreshed > admission["last_verified_at"], "but counts as a refresh of the cache"


async def test_conditional_headers_are_per_environment(
    cli_env: dict[str, str], register_server: tuple[str, Register], sessionmaker: Maker
) -> None:
    url, served = register_server
    served.body = register_csv(row("12345678"))
    assert (await invoke_async(cli_env, "wtta", "import", url, "--env", "test"))[0] == 0
    assert (await invoke_async(cli_env, "wtta", "import", url))[0] == 0
    assert "If-None-Match" not in served.requests[1]
    assert await status_of(sessionmaker, "12345678") == "admitted"


async def test_a_connection_dropped_halfway_changes_nothing(
    cli_env: dict[str, str], register_server: tuple[str, Register], sessionmaker: Maker
) -> None:
    url, served = register_server
    served.body = register_csv(row("12345678"))
    assert (await invoke_async(cli_env, "wtta", "import", url))[0] == 0
    served.body = register_csv(*[row(f"{10000000 + i}", "revoked") for i in range(2000)], row("12345678", "revoked"))
    served.drop_halfway = True
    served.requests.clear()
    code, out, err = await invoke_async(cli_env, "wtta", "import", url, "--source", "changed")
    assert (code, out) == (1, "")
    assert served.requests[0]["If-None-Match"] != etag_of(served.body), "the register changed"
    assert err.startswith(f"error: downloading {url} failed")
    assert await status_of(sessionmaker, "12345678") == "admitted"
    assert await status_of(sessionmaker, "10000000") is None
    async with sessionmaker() as session:
        previous = await service.last_url_import(session, environment=Environment.live, url=url)
    assert previous is not None
    assert previous.source == url, "the failed download was not recorded"


def test_a_server_error_is_reported(cli_env: dict[str, str], register_server: tuple[str, Register]) -> None:
    url, _ = register_server
    code, _, err = invoke(cli_env, "wtta", "import", url.replace("register.csv", "") + "missing", "--quiet")
    assert code == 1
    assert "error:" in err
