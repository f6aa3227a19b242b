from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from compliance_api.auth import tokens
from tests.cli.conftest import invoke
from tests.conftest import require_service
from tests.servers import free_port, server


def test_users_tokens_lifecycle(cli_env: dict[str, str]) -> None:
    code, out, _ = invoke(cli_env, "users", "create", "Ops@Example.com", "--kind", "business", "--plan", "pro")
    assert code == 0
    uuid.UUID(out.strip())

    code, out, _ = invoke(cli_env, "tokens", "create", "ops@example.com", "--name", "payroll", "--env", "test")
    assert code == 0
    token = out.strip()
    assert out == token + "\n", "the token is printed alone"
    parsed = tokens.parse(token)
    assert parsed is not None
    assert parsed.environment.value == "test"

    code, out, _ = invoke(cli_env, "tokens", "list", "ops@example.com", "--json")
    assert code == 0
    listed = json.loads(out)["tokens"]
    assert [(t["name"], t["environment"], t["last4"], t["status"]) for t in listed] == [
        ("payroll", "test", token[-4:], "active")
    ]
    assert token[8:-4] not in out

    code, _, _ = invoke(cli_env, "tokens", "revoke", listed[0]["id"])
    assert code == 0
    code, out, _ = invoke(cli_env, "tokens", "list", "ops@example.com", "--json")
    assert json.loads(out)["tokens"][0]["status"] == "revoked"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["users", "create", "not-an-email"], "invalid e-mail"),
        (["tokens", "create", "nobody@example.com"], "no user"),
        (["tokens", "list", "nobody@example.com"], "no user"),
        (["tokens", "revoke", "not-a-uuid"], "not a token id"),
        (["tokens", "revoke", str(uuid.UUID(int=1))], "no token"),
    ],
)
def test_bad_input_exits_non_zero_with_a_clear_message(cli_env: dict[str, str], args: list[str], message: str) -> None:
    code, out, err = invoke(cli_env, *args)
    assert code == 1
    assert message in err
    assert out == ""


def test_duplicate_user_is_refused(cli_env: dict[str, str]) -> None:
    assert invoke(cli_env, "users", "create", "dup@example.com")[0] == 0
    code, _, err = invoke(cli_env, "users", "create", "DUP@example.com")
    assert code == 1
    assert "already exists" in err


def test_demo_prints_working_tokens_and_curl_lines(cli_env: dict[str, str]) -> None:
    code, out, _ = invoke(cli_env, "demo")
    assert code == 0
    live = re.search(r"sk_live_\w+", out)
    test = re.search(r"sk_test_\w+", out)
    assert live
    assert test
    assert f'curl -H "Authorization: Bearer {live.group()}" "http://127.0.0.1:8000/v1/health"' in out
    assert f'curl -H "Authorization: Bearer {test.group()}" "http://127.0.0.1:8001/v1/health"' in out

    code, out, _ = invoke(cli_env, "demo", "--json")
    document = json.loads(out)
    assert set(document) == {"tokens", "rotated", "fixtures", "production"}
    assert tokens.parse(document["tokens"]["live"]) is not None
    assert document["tokens"]["test"].startswith("sk_test_")
    code, out, _ = invoke(cli_env, "tokens", "list", "demo-business@example.com", "--json")
    statuses = [t["status"] for t in json.loads(out)["tokens"]]
    assert statuses == ["active", "active"], "a new demo keeps the demo tokens"


def test_serve_refuses_several_workers_without_redis(cli_env: dict[str, str]) -> None:
    code, _, err = invoke(cli_env, "serve", "--workers", "2")
    assert code == 2
    assert "REDIS_URL" in err


def test_migrate_reports_success(cli_env: dict[str, str]) -> None:
    code, _, err = invoke(cli_env, "migrate")
    assert code == 0
    assert "newest schema" in err


def test_demo_curl_lines_work_as_printed(cli_env: dict[str, str], database_url: str, var_dir: Path) -> None:
    """The lines `make run PORT=…` prints, executed by curl against a real `serve` on that port and its sandbox
    port."""
    require_service(shutil.which("curl") is not None, "curl")
    port, sandbox_port = free_port(), free_port()
    sandbox = {"COMPLIANCE_SANDBOX_PORT": str(sandbox_port)}
    code, out, _ = invoke({**cli_env, **sandbox}, "demo", "--env", "live", "--port", str(port))
    assert code == 0
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("curl ")]
    assert len(lines) == 8
    assert sum(f"http://127.0.0.1:{sandbox_port}/" in line for line in lines) == 5
    with server(
        database_url=database_url, redis_url="", var_dir=str(var_dir), port=port, via_cli=True, extra_env=sandbox
    ):
        for line in lines:
            command = [*shlex.split(line), "-s", "-o", "/dev/null", "-w", "%{http_code}"]
            answer = subprocess.run(command, capture_output=True, text=True, check=False)
            assert answer.stdout == "200", line
