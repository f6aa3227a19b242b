"""Real server processes for tests that need more than one worker on one database and one Redis."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
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
    with servers(
        [extra_env or {}], database_url=database_url, redis_url=redis_url, var_dir=var_dir, via_cli=via_cli, port=port
    ) as (base_url,):
        yield base_url


@contextmanager
def servers(
    extra_envs: Sequence[Mapping[str, str]],
    *,
    database_url: str,
    redis_url: str,
    var_dir: str,
    via_cli: bool = False,
    port: int | None = None,
) -> Iterator[list[str]]:
    """One server (as `server` starts it) for each of `extra_envs`, started side by side (each takes about 2 s to
    import the app), on distinct free ports (`port` for the first, if given); yields their base URLs once each
    `/livez` answers."""
    ports = free_ports(len(extra_envs))
    if port is not None:
        ports[0] = port
    with ExitStack() as stack:
        started = [
            stack.enter_context(
                _process(
                    database_url=database_url,
                    redis_url=redis_url,
                    var_dir=var_dir,
                    port=bound,
                    via_cli=via_cli,
                    extra_env=extra_env,
                )
            )
            for bound, extra_env in zip(ports, extra_envs, strict=True)
        ]
        stack.callback(_terminate, [process for process, _ in started])  # all at once, before each is waited for
        for process, base_url in started:
            _wait_until_live(process, base_url)
        yield [base_url for _, base_url in started]


def _terminate(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()


def free_ports(count: int) -> list[int]:
    """`count` distinct free ports (each probe is held until all are chosen, so none is chosen twice)."""
    with ExitStack() as stack:
        probes = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in probes]


@contextmanager
def _process(
    *, database_url: str, redis_url: str, var_dir: str, port: int, via_cli: bool, extra_env: Mapping[str, str]
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """The server process, started (not yet answering), and its base URL; terminated afterwards."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": var_dir,
        "COMPLIANCE_ACCESS_LOG": "false",
        "COMPLIANCE_SANDBOX_PORT": "0",  # none unless asked for: port + 1 may be another test's
        **extra_env,
    }
    module = ["compliance_api", "serve"] if via_cli else ["uvicorn", "compliance_api.app:create_app", "--factory"]
    command = [sys.executable, "-m", *module, "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield process, f"http://127.0.0.1:{port}"
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
