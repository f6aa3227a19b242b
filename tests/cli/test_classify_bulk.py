"""`compliance-api classify bulk`: a CSV in, each row's verdict or error by line out, through a real server's API
(`--base-url`) or in the database (`--email`); a run stopped part way resumes without classifying any row twice."""

from __future__ import annotations

import asyncio
import csv
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import orjson
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import User
from compliance_api.classify.models import Classification
from tests.cli.conftest import invoke
from tests.conftest import database_of_the_module
from tests.factories import create_token, create_user
from tests.servers import server

EXAMPLE = Path(__file__).parents[2] / "docs" / "integrate" / "bulk-example.csv"
DUTCH = "reference,hourly_rate_eur,months_duration,days_per_week,other_clients_count,own_tools,own_liability"


database_url = pytest.fixture(scope="module", name="database_url")(database_of_the_module)


@pytest.fixture(scope="module")
def api(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real server on the test database, for the module's tests (each makes its own account)."""
    var_dir = str(tmp_path_factory.mktemp("var"))
    with server(database_url=database_url, redis_url=os.environ.get("REDIS_URL", ""), var_dir=var_dir) as base_url:
        yield base_url


async def _account(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> tuple[User, str]:
    user = await create_user(sessionmaker)
    _, token = await create_token(sessionmaker, pepper, user=user)
    return user, token


async def _classified(sessionmaker: async_sessionmaker[AsyncSession], user: User) -> list[str]:
    async with sessionmaker() as session:
        ids = await session.scalars(select(Classification.id).where(Classification.user_id == user.id))
        return sorted(str(id) for id in ids)


def _results(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


async def _bulk(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    return await asyncio.to_thread(invoke, env, "classify", "bulk", *args)


async def test_over_http_both_tests_are_classified_and_errors_named_by_line(
    api: str, cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, tmp_path: Path
) -> None:
    user, token = await _account(sessionmaker, pepper)
    out = tmp_path / "verdicts.csv"
    code, stdout, stderr = await _bulk(
        {**cli_env, "COMPLIANCE_API_TOKEN": token}, str(EXAMPLE), "--out", str(out), "--base-url", api
    )
    assert code == 0, stderr
    assert stdout.startswith("9 rows, 5 classified (")
    assert "4 refused" in stdout
    results = _results(out)
    assert [r["line"] for r in results] == [str(line) for line in range(2, 11)]
    assert [r["reference"] for r in results][4] == "be-4001, Antwerp"
    assert [bool(r["verdict"]) for r in results] == [True] * 5 + [False] * 4
    assert results[3]["verdict"] == "unsafe"  # FR: orders, control and sanction
    assert [r["error_code"] for r in results[5:]] == ["validation_failed"] * 4
    errors = stderr.splitlines()
    assert errors[0].startswith("line 7: field hourly_rate_eur: ")  # refused by the API
    assert errors[1:] == [
        "line 8: field hourly_rate_eur: not an input of the DE test; leave it empty on this row",
        "line 9: field country: 'XX' is not NL, FR, DE or BE (empty means NL)",
        "line 10: field months_duration: 'twelve' is not a whole number; "
        "field own_tools: 'maybe' is not a yes/no answer: true/false, yes/no or 1/0",
    ]
    assert [r["error"] for r in results[5:]] == errors
    assert await _classified(sessionmaker, user) == sorted(r["id"] for r in results if r["id"])
    assert token not in stdout + stderr


class CutOff:
    """An HTTP proxy before the real server that passes `answered` batches and their answers, then passes one more
    batch but drops its answer, then drops every request: a server that stops answering part way through a run."""

    def __init__(self, target: str, answered: int) -> None:
        self.target = target
        self.answered = answered
        self.received = 0
        self.lock = threading.Lock()

    def forward(self, handler: BaseHTTPRequestHandler) -> None:
        body = handler.rfile.read(int(handler.headers.get("Content-Length", "0")))
        with self.lock:
            self.received += 1
            number = self.received
        handler.close_connection = True
        if number > self.answered + 1:
            return
        names = ("Authorization", "Content-Type", "Idempotency-Key")
        headers = {name: handler.headers[name] for name in names if handler.headers[name]}
        upstream = httpx.post(self.target + handler.path, content=body, headers=headers, timeout=30)
        if number > self.answered:
            return  # classified, but the answer never arrives
        handler.send_response(upstream.status_code)
        for name in ("Content-Type", "Idempotent-Replayed", "Retry-After"):
            if name in upstream.headers:
                handler.send_header(name, upstream.headers[name])
        handler.send_header("Content-Length", str(len(upstream.content)))
        handler.end_headers()
        handler.wfile.write(upstream.content)


@contextmanager
def cut_off(target: str, answered: int) -> Iterator[str]:
    proxy = CutOff(target, answered)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            proxy.forward(self)

        def log_message(self, *_: object) -> None:
            pass

    class Listener(ThreadingHTTPServer):
        def handle_error(self, *_: object) -> None:
            pass  # a client that went away (the run stopped) while an answer was on its way

    listener = Listener(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=listener.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.server_address[1]}"
    finally:
        listener.shutdown()
        listener.server_close()
        thread.join(timeout=10)


def _engagements(count: int) -> str:
    """`count` rows, every third a German one, with one the API refuses and one that cannot be sent."""
    lines = ["country,reference,hourly_rate_eur,own_tools,subject_to_instructions"]
    for number in range(count):
        lines.append(
            f"DE,de-{number},,,{'yes' if number % 2 else 'no'}"
            if number % 3 == 0
            else f"NL,nl-{number},{40 + number},yes,"
        )
    lines[50] = "NL,refused-by-api,-1,yes,"
    lines[101] = "NL,refused-here,,perhaps,"
    return "\n".join(lines) + "\n"


async def test_a_run_stopped_part_way_resumes_without_classifying_any_row_twice(
    api: str, cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, tmp_path: Path
) -> None:
    user, token = await _account(sessionmaker, pepper)
    source, out = tmp_path / "engagements.csv", tmp_path / "verdicts.csv"
    source.write_text(_engagements(240), encoding="utf-8")
    env = {**cli_env, "COMPLIANCE_API_TOKEN": token}
    options = ("--out", str(out), "--batch-size", "20", "--concurrency", "2")  # 8 Dutch batches, 4 German

    with cut_off(api, answered=4) as proxy:
        code, _, stderr = await _bulk(env, str(source), *options, "--base-url", proxy, "--retries", "0")
    assert code == 1
    assert "batches were answered before the run stopped; run the same command" in stderr
    assert not out.exists()
    first_run = await _classified(sessionmaker, user)
    assert 0 < len(first_run) < 238

    code, stdout, stderr = await _bulk(env, str(source), *options, "--base-url", api)
    assert code == 0, stderr
    assert stdout.startswith("240 rows, 238 classified (")
    assert f"; {len(first_run)} answered by an earlier run), 2 refused" in stdout
    results = _results(out)
    assert len(results) == 240
    assert [r["reference"] for r in results if r["error"]] == ["refused-by-api", "refused-here"]
    stored = await _classified(sessionmaker, user)
    assert stored == sorted(r["id"] for r in results if r["id"])  # one verdict a row: none twice, none missing
    assert set(first_run) <= set(stored)


async def test_a_run_in_the_database_and_one_over_http_replay_each_other(
    api: str, cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, tmp_path: Path
) -> None:
    """Both ways send the same batches under the same keys, so each answers the other's rows from its records; the
    results files are the same."""
    user, token = await _account(sessionmaker, pepper)
    in_database, over_http = tmp_path / "database.csv", tmp_path / "http.csv"
    code, stdout, stderr = await _bulk(cli_env, str(EXAMPLE), "--out", str(in_database), "--email", user.email)
    assert code == 0, stderr
    assert "answered by an earlier run" not in stdout
    classified = await _classified(sessionmaker, user)
    assert len(classified) == 5

    env = {**cli_env, "COMPLIANCE_API_TOKEN": token}
    code, stdout, stderr = await _bulk(env, str(EXAMPLE), "--out", str(over_http), "--base-url", api)
    assert code == 0, stderr
    assert "5 answered by an earlier run" in stdout
    assert await _classified(sessionmaker, user) == classified
    assert over_http.read_text() == in_database.read_text()

    code, stdout, _ = await _bulk(
        cli_env, str(EXAMPLE), "--out", str(in_database), "--email", user.email, "--run-id", "2"
    )
    assert code == 0
    assert "answered by an earlier run" not in stdout  # another run id: classified again
    assert len(await _classified(sessionmaker, user)) == 10


async def test_a_refused_token_stops_the_run_without_showing_it(
    api: str, cli_env: dict[str, str], tmp_path: Path
) -> None:
    token = "sk_live_" + "A" * 38
    out = tmp_path / "verdicts.csv"
    env = {**cli_env, "COMPLIANCE_API_TOKEN": token}
    code, stdout, stderr = await _bulk(env, str(EXAMPLE), "--out", str(out), "--base-url", api)
    assert code == 1
    assert "the API answered 401" in stderr
    assert "resume" not in stderr  # running again with the same token cannot help
    assert not out.exists()
    help_code, help_text, _ = await _bulk(env, "--help")
    assert help_code == 0
    assert "COMPLIANCE_API_TOKEN" in help_text
    assert token not in stdout + stderr + help_text


async def test_the_database_way_judges_under_the_law_of_as_of(
    cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    """EUR 37 with own tools, liability cover, profit risk and a substitute allowed, but hours set by the client: safe
    under the 2025 threshold (36), where the pay weighs towards self-employment; not under today's (38)."""
    user = await create_user(sessionmaker)
    source = tmp_path / "one.csv"
    source.write_text(
        "reference,hourly_rate_eur,own_tools,own_liability,sets_own_hours,can_delegate,profit_risk\n"
        "c-37,37,true,true,false,true,true\n",
        encoding="utf-8",
    )
    verdicts = {}
    for as_of in ("2025-03-01", "2026-11-25"):
        out = tmp_path / f"{as_of}.csv"
        code, _, stderr = await _bulk(cli_env, str(source), "--out", str(out), "--email", user.email, "--as-of", as_of)
        assert code == 0, stderr
        verdicts[as_of] = _results(out)[0]["verdict"]
    assert verdicts["2025-03-01"] == "safe"
    assert verdicts["2026-11-25"] != "safe"


async def test_a_file_with_unknown_columns_is_refused_before_anything_is_classified(
    cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    user = await create_user(sessionmaker)
    source, out = tmp_path / "contractors.csv", tmp_path / "verdicts.csv"
    source.write_text("reference,hourly_rate,tarief\nx,95,1\n", encoding="utf-8")
    code, _, stderr = await _bulk(cli_env, str(source), "--out", str(out), "--email", user.email)
    assert code == 1
    assert "error: line 1, field header: unknown columns ['hourly_rate', 'tarief']" in stderr
    assert not out.exists()
    assert await _classified(sessionmaker, user) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give --email (classify in this installation's database) or --base-url and a token"),
        (("--base-url", "http://127.0.0.1:9"), "--base-url needs a token: --token or the environment variable"),
        (("--base-url", "ftp://host", "--token", "t"), "--base-url must be an http:// or https:// URL"),
        (("--base-url", "http://[::1", "--token", "t"), "--base-url must be an http:// or https:// URL"),
        (("--base-url", "http://h", "--token", "t", "--email", "a@b.nl"), "over HTTP the token decides the account"),
    ],
)
def test_the_options_pick_one_way_to_classify(
    cli_env: dict[str, str], tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    code, _, stderr = invoke(cli_env, "classify", "bulk", str(EXAMPLE), "--out", str(tmp_path / "o.csv"), *args)
    assert code == 2
    assert message in stderr


def test_results_for_a_folder_that_does_not_exist_are_refused_before_anything_is_sent(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "missing" / "verdicts.csv"
    code, _, stderr = invoke(cli_env, "classify", "bulk", str(EXAMPLE), "--out", str(out), "--email", "a@example.com")
    assert code == 2
    assert f"error: --out: folder {out.parent} does not exist" in stderr


@contextmanager
def answers_one_batch_then_hangs() -> Iterator[tuple[str, threading.Event]]:
    """A deployment that answers the first batch and holds the second open; the event is set when it arrives."""
    holding, released = threading.Event(), threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            items = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))["items"]
            if holding.is_set() or self.server.answered:  # type: ignore[attr-defined]
                holding.set()
                released.wait(30)
                return
            self.server.answered = True  # type: ignore[attr-defined]
            body = orjson.dumps({"data": [{"id": f"v{n}", "verdict": "safe", "score": 1} for n in range(len(items))]})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    class Listener(ThreadingHTTPServer):
        answered = False

        def handle_error(self, *_: object) -> None:
            pass

    listener = Listener(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=listener.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.server_address[1]}", holding
    finally:
        released.set()
        listener.shutdown()
        listener.server_close()
        thread.join(timeout=10)


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_ctrl_c_and_sigterm_say_what_was_answered_and_how_to_resume(
    cli_env: dict[str, str], tmp_path: Path, signum: signal.Signals, status: int
) -> None:
    source, out = tmp_path / "engagements.csv", tmp_path / "verdicts.csv"
    source.write_text(f"{DUTCH}\na,80,12,5,0,yes,yes\nb,80,12,5,0,yes,yes\n", encoding="utf-8")
    env = {**os.environ, **cli_env, "COMPLIANCE_API_TOKEN": "sk_live_" + "x" * 38}
    with answers_one_batch_then_hangs() as (base_url, holding):
        command = [sys.executable, "-m", "compliance_api", "classify", "bulk", str(source), "--out", str(out)]
        options = ["--base-url", base_url, "--batch-size", "1", "--concurrency", "1"]
        process = subprocess.Popen([*command, *options], env=env, stderr=subprocess.PIPE, text=True)
        assert holding.wait(60), "the second batch never arrived"
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == status
    assert f"stopped by {signum.name}: 1 batches were answered, no results written; run the same command" in stderr
    assert not out.exists()
    assert not (tmp_path / "verdicts.csv.partial").exists()


async def test_a_base_url_whose_host_does_not_resolve_fails_at_once(cli_env: dict[str, str], tmp_path: Path) -> None:
    """`.invalid` never resolves (RFC 6761): no retry, no minute of waiting, no advice to resume."""
    env = {**cli_env, "COMPLIANCE_API_TOKEN": "sk_live_" + "x" * 38}
    out = tmp_path / "verdicts.csv"
    code, _, stderr = await _bulk(env, str(EXAMPLE), "--out", str(out), "--base-url", "http://compliance.invalid")
    assert code == 1
    assert "cannot resolve 'compliance.invalid', the host of --base-url" in stderr
    assert "retrying" not in stderr
    assert "resume" not in stderr
    assert not out.exists()
