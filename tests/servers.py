"""Real server processes for tests that need more than one worker on one database and one Redis."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager

import httpx

from tests.conftest import SECRET


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server(
    *,
    database_url: str,
    redis_url: str,
    var_dir: str,
    port: int | None = None,
    via_cli: bool = False,
    extra_env: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """One uvicorn process serving the app (started by `compliance-api serve` if `via_cli`), with `extra_env` added
    to its environment; yields its base URL once `/livez` answers."""
    port = port or free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": var_dir,
        "COMPLIANCE_ACCESS_LOG": "false",
        "COMPLIANCE_SANDBOX_PORT": "0",  # none unless asked for: port + 1 may be another test's
        **(extra_env or {}),
    }
    module = ["compliance_api", "serve"] if via_cli else ["uvicorn", "compliance_api.app:create_app", "--factory"]
    command = [sys.executable, "-m", *module, "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_live(process, base_url)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_live(process: subprocess.Popen[bytes], base_url: str, limit_seconds: float = 30.0) -> None:
    deadline = time.monotonic() + limit_seconds
    # One client for the whole wait: each new one loads the CA bundle (25 ms), about as long as the wait itself.
    with httpx.Client(timeout=1, trust_env=False) as probe:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"server exited: {process.stderr.read().decode() if process.stderr else ''}")
            try:
                if probe.get(f"{base_url}/livez").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
    raise RuntimeError(f"server at {base_url} did not start within {limit_seconds} s")


@contextmanager
def servers(count: int, **kwargs: str) -> Iterator[list[str]]:
    with ExitStack() as stack:
        yield [stack.enter_context(server(**kwargs)) for _ in range(count)]  # type: ignore[arg-type]
