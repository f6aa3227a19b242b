"""The examples of the README and the guide run as written, against a live server, or say why they cannot.

Every ```sh, ```python and ```ts block of `README.md` and `docs/` is one of two kinds:

* runnable: it is run here as written, with only the placeholders below replaced by what a fresh `make run` would
  have printed (a server of its own on free ports, with the demo's data), and must succeed; a `print(...)  # x` or
  `console.log(...); // x` line must print `x`;
* illustrative: the line before its fence is `<!-- illustrative: why -->`, and `why` says why it is not run (it
  starts a server, needs a deployment of one's own, is a fragment of the reader's code…).

Placeholders (the same in every document): `sk_live_…` (the demo business's production token), `sk_test_…` and
`sk_test_…(business)` (its sandbox token), `sk_test_…(freelancer)` (the demo freelancer's), `pst_…` (its valid
share-token), `http://127.0.0.1:8000` and `http://127.0.0.1:8001` (the production and sandbox base URLs) and
`0f8fad5b-d9cb-469f-a165-70867728950e` (a production classification of the demo business). A shell example runs in
an empty folder holding `engagements.csv` (the guide's example file), with `curl` failing on any HTTP error and
`compliance-api` working on the server's database.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from typer.testing import CliRunner

from compliance_api.cli import app as cli
from tests.classify.conftest import Account, make_account
from tests.conftest import SECRET, private_database, require_program, require_service
from tests.servers import free_port, server

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
FENCE = re.compile(
    r"^(?:<!-- illustrative: (?P<why>[^\n]*?) -->\n)?```(?P<language>sh|python|ts)\n(?P<code>.*?)^```$",
    re.MULTILINE | re.DOTALL,
)
EXAMPLE_CLASSIFICATION = "0f8fad5b-d9cb-469f-a165-70867728950e"
LEFT_UNRUNNABLE = re.compile(
    r"…|api\.example\.com|\[--|(?<![\w.])<[a-z][a-z -]*>|(?m:^(?:[A-Z_]+=\S+ +)*make )", re.MULTILINE
)
"""What a runnable example may not hold once its placeholders are replaced: an ellipsis, the documentation's example
host, an optional `[--option]` of a synopsis, a `<placeholder>` (not a TypeScript type argument: `f<paths>`), or a
`make` target (they install, or start a server that runs until stopped)."""
COMMENT = {"sh": re.compile(r"(?:^|\s)#.*$", re.MULTILINE), "python": re.compile(r"(?:^|\s)#.*$", re.MULTILINE)}
COMMENT["ts"] = re.compile(r"(?:^|\s)//.*$", re.MULTILINE)
EXPECTED_OUTPUT = {
    "python": re.compile(r"^print\(.*\)\s+# (?P<out>.+)$", re.MULTILINE),
    "ts": re.compile(r"^console\.log\(.*\);\s+// (?P<out>.+)$", re.MULTILINE),
}
SHELL_PREAMBLE = """set -euo pipefail
curl() { command curl --fail-with-body --silent --show-error "$@"; }
"""
BULK_EXAMPLE = ROOT / "docs" / "integrate" / "bulk-example.csv"
CLIENTS = ROOT / "var" / "clients"
TYPESCRIPT = ROOT / "clients" / "typescript"


@dataclass(frozen=True, slots=True)
class Example:
    document: Path
    number: int
    language: str
    code: str
    illustrative: str | None

    @property
    def name(self) -> str:
        return f"{self.document.relative_to(ROOT)}#{self.number}"

    def without_comments(self) -> str:
        return COMMENT[self.language].sub("", self.code)


def _examples() -> list[Example]:
    found = []
    for document in DOCUMENTS:
        for number, match in enumerate(FENCE.finditer(document.read_text()), 1):
            found.append(Example(document, number, match["language"], match["code"], match["why"]))
    return found


EXAMPLES = _examples()
RUNNABLE = [example for example in EXAMPLES if example.illustrative is None]


@dataclass(frozen=True, slots=True)
class Demo:
    """What `make run` would have printed, for a server of the test's own."""

    base_url: str
    sandbox_url: str
    live: str
    test: str
    freelancer: str
    share_token: str
    classification_id: str
    env: dict[str, str]

    def replace(self, code: str) -> str:
        for placeholder, value in (
            ("sk_test_…(freelancer)", self.freelancer),
            ("sk_test_…(business)", self.test),
            ("sk_live_…", self.live),
            ("sk_test_…", self.test),
            ("pst_…", self.share_token),
            ("http://127.0.0.1:8000", self.base_url),
            ("http://127.0.0.1:8001", self.sandbox_url),
            (EXAMPLE_CLASSIFICATION, self.classification_id),
        ):
            code = code.replace(placeholder, value)
        return code


def test_every_example_runs_or_says_why_not() -> None:
    """A runnable example holds nothing a reader would have to fill in but the placeholders; an illustrative one
    says why it is not run."""
    assert len(RUNNABLE) >= 20, "the fences were not found: the pattern no longer matches the documents"
    assert {example.language for example in RUNNABLE} == {"sh", "python", "ts"}
    unexplained = [e.name for e in EXAMPLES if e.illustrative is not None and len(e.illustrative) < 10]
    assert unexplained == [], "say why these are illustrative"
    filled = Demo("", "", "x", "x", "x", "x", "x", {})
    unrunnable = {
        example.name: left
        for example in RUNNABLE
        if (left := LEFT_UNRUNNABLE.findall(filled.replace(example.without_comments())))
    }
    assert unrunnable == {}, "these cannot run as written: use the placeholders, or mark them illustrative"


@pytest.mark.parametrize(
    "text",
    [
        "curl https://api.example.com/v1/health",
        "compliance-api x [--force]",
        "curl -H 'X: <your token>' x",
        "a …",
        "make run",
        "curl x\nCOMPLIANCE_X=true make run",
    ],
)
def test_the_guard_catches_what_a_reader_would_fill_in(text: str) -> None:
    assert LEFT_UNRUNNABLE.search(text)


def test_the_guard_lets_typescript_type_arguments_through() -> None:
    assert not LEFT_UNRUNNABLE.search("const api = createClient<paths>({ baseUrl });")


@pytest.fixture(scope="module")
def database(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database of the module's own: the examples add users and endpoints of their own (no two documents make the
    same ones), and the server outlives each test (see `private_database`)."""
    with private_database(database_url, tmp_path_factory.mktemp("docs")) as url:
        yield url


@pytest.fixture(scope="module")
def demo(database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    """What `make run` does, on free ports: migrate (`database` is), the demo's data, `serve` with a sandbox port; and
    three classifications (a list of them has a second page). One per module and test process: starting it takes
    seconds. `demo` runs in this process, as the CLI tests run commands: an interpreter of its own would add a second
    of imports."""
    tmp_path = tmp_path_factory.mktemp("docs-server")
    port, sandbox_port = free_port(), free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COMPLIANCE_") and k != "REDIS_URL"},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "DATABASE_URL": database,
        "COMPLIANCE_VAR_DIR": str(tmp_path / "var"),
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_SANDBOX_PORT": str(sandbox_port),
        "COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
        "COMPLIANCE_ACCESS_LOG": "false",
    }
    unset: dict[str, str | None] = {name: None for name in os.environ if name not in env}
    done = CliRunner().invoke(cli, ["demo", "--json", "--port", str(port)], env={**unset, **env})
    assert done.exit_code == 0, done.stderr
    printed = json.loads(done.stdout)
    with server(
        database_url=database, redis_url="", var_dir=env["COMPLIANCE_VAR_DIR"], port=port, via_cli=True, extra_env=env
    ) as base_url:
        live = printed["tokens"]["live"]
        engagement = {"engagement": {"hourly_rate_eur": 95, "own_tools": True}, "reference": "docs-example"}
        made = [
            httpx.post(f"{base_url}/v1/classify/zelfstandigenwet", json=engagement, headers=_bearer(live)).json()
            for _ in range(3)
        ]
        yield Demo(
            base_url=base_url,
            sandbox_url=f"http://127.0.0.1:{sandbox_port}",
            live=live,
            test=printed["tokens"]["test"],
            freelancer=printed["tokens"]["freelancer"],
            share_token=printed["fixtures"]["passport"]["share_tokens"]["valid"],
            classification_id=made[0]["id"],
            env=env,
        )


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _expected_output(example: Example) -> list[str]:
    return [match["out"] for match in EXPECTED_OUTPUT[example.language].finditer(example.code)]


def _documents_with(language: str) -> list[Path]:
    return sorted({example.document for example in RUNNABLE if example.language == language})


@pytest.mark.parametrize("document", _documents_with("sh"), ids=lambda path: str(path.relative_to(ROOT)))
def test_the_shell_examples_run_as_written(document: Path, demo: Demo, tmp_path: Path) -> None:
    """A document's shell examples, in their order (a later one may use what an earlier one made)."""
    require_service(shutil.which("curl") is not None, "curl")
    workdir = tmp_path / "reader"
    workdir.mkdir()
    shutil.copy(BULK_EXAMPLE, workdir / "engagements.csv")
    for example in (example for example in RUNNABLE if example.document == document and example.language == "sh"):
        done = subprocess.run(
            ["bash", "-c", SHELL_PREAMBLE + demo.replace(example.code)],
            cwd=workdir,
            env=demo.env,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        assert done.returncode == 0, f"{example.name} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


@pytest.mark.parametrize("example", [e for e in RUNNABLE if e.language == "python"], ids=lambda example: example.name)
def test_the_python_examples_run_as_written_and_print_what_they_say(example: Example, demo: Demo) -> None:
    """With the generated client (`make clients`) importable, as `pip install ./var/clients/python` makes it."""
    require_program(str(CLIENTS / "python" / "compliance_api_client"), "generate it with `make clients`")
    env = {**demo.env, "PYTHONPATH": str(CLIENTS / "python")}
    done = subprocess.run(
        [sys.executable, "-c", demo.replace(example.code)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"{example.name} failed:\n{done.stderr[-2000:]}"
    assert done.stdout.splitlines() == _expected_output(example)


@pytest.mark.parametrize("example", [e for e in RUNNABLE if e.language == "ts"], ids=lambda example: example.name)
def test_the_typescript_examples_compile_run_and_print_what_they_say(
    example: Example, demo: Demo, tmp_path: Path
) -> None:
    """Compiled by `tsc` with the TypeScript client's own settings against the generated `schema.d.ts` (imported as
    `./schema.js`), then run by Node."""
    tsc = TYPESCRIPT / "node_modules" / ".bin" / "tsc"
    require_program(str(tsc), "install the TypeScript client's tools with `make clients`")
    require_program(str(CLIENTS / "typescript" / "schema.d.ts"), "generate it with `make clients`")
    require_program("/usr/bin/node", "install Node.js (`apt-get install nodejs`)")
    shutil.copy(CLIENTS / "typescript" / "schema.d.ts", tmp_path / "schema.d.ts")
    (tmp_path / "node_modules").symlink_to(TYPESCRIPT / "node_modules")
    (tmp_path / "package.json").write_text(json.dumps({"type": "module"}))
    (tmp_path / "example.ts").write_text(demo.replace(example.code))
    settings = json.loads((TYPESCRIPT / "tsconfig.json").read_text())["compilerOptions"]
    settings = {**settings, "rootDir": ".", "outDir": "out"}
    (tmp_path / "tsconfig.json").write_text(json.dumps({"compilerOptions": settings, "files": ["example.ts"]}))
    compiled = subprocess.run([str(tsc), "-p", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert compiled.returncode == 0, f"{example.name} does not compile:\n{compiled.stdout}{compiled.stderr}"
    done = subprocess.run(
        ["/usr/bin/node", str(tmp_path / "out" / "example.js")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"{example.name} failed:\n{done.stderr[-2000:]}"
    assert done.stdout.splitlines() == _expected_output(example)


ERRORS_GUIDE = ROOT / "docs" / "integrate" / "errors.md"
REQUEST_ID = re.compile(r"^req_[0-9a-f]{24}$")


@pytest.fixture
async def account(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> Account:
    return await make_account(sessionmaker, pepper)


async def test_the_error_guide_shows_what_the_server_answers(client: AsyncClient, account: Account) -> None:
    """The guide's problem document is the answer to the request it names, but for the request id (its own, in the
    server's format) and the host of `type`."""
    example = re.search(r"^```json\n(.*?)^```$", ERRORS_GUIDE.read_text(), re.MULTILINE | re.DOTALL)
    assert example is not None
    shown = json.loads(example[1])
    assert '`{"engagement": {"hourly_rate_eur": -5}}`' in ERRORS_GUIDE.read_text()
    answer = await client.post(
        "/v1/classify/zelfstandigenwet", json={"engagement": {"hourly_rate_eur": -5}}, headers=account.live
    )
    assert answer.headers["content-type"] == "application/problem+json"
    body = answer.json()
    assert REQUEST_ID.match(shown["request_id"])
    assert REQUEST_ID.match(body["request_id"])
    assert body["request_id"] == answer.headers["x-request-id"]
    assert body["type"].rsplit("/errors/", 1)[1] == shown["type"].rsplit("/errors/", 1)[1]
    assert {k: v for k, v in body.items() if k not in ("request_id", "type")} == {
        k: v for k, v in shown.items() if k not in ("request_id", "type")
    }
