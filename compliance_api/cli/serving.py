"""What `serve` runs: uvicorn with the sandbox port, announcing itself once it answers."""

from __future__ import annotations

import functools
import os
import socket
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import httpx
import typer
import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors.multiprocess import Multiprocess

from compliance_api.config import Settings
from compliance_api.kit.addresses import listening_url

Announce = Callable[[int, int | None], None]  # called with the ports really bound (main, sandbox) once it answers
Ready = Callable[[], None]
READY_POLL_SECONDS = 0.1
SANDBOX_PORT_VARIABLE = "COMPLIANCE_SANDBOX_PORT"


def listening_line(settings: Settings, host: str, port: int, sandbox_port: int | None) -> str:
    """The one line `serve` prints once it listens: where to go, and how a request picks its environment."""
    url = listening_url(host, port)
    sandbox = []
    if sandbox_port is not None:
        sandbox.append(f"at {listening_url(host, sandbox_port)} (COMPLIANCE_SANDBOX_PORT)")
    if settings.sandbox_hosts:
        sandbox.append(f"for Host {', '.join(settings.sandbox_hosts)} (COMPLIANCE_SANDBOX_HOSTS)")
    return (
        f"compliance-api listening on {url}: docs {url}/docs, guide {url}/guide/, dashboard {url}/freelancer/; "
        f"the sandbox {' and '.join(sandbox) or 'nowhere'}, production for any other host"
    )


class AnnouncingServer(uvicorn.Server):
    """uvicorn's server, announcing itself once its application started and its socket listens."""

    def __init__(self, config: uvicorn.Config, ready: Ready) -> None:
        super().__init__(config)
        self.ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.ready()


class AnnouncingMultiprocess(Multiprocess):
    """uvicorn's supervisor of several workers, announcing once a worker answers on the first shared socket.

    Asked over HTTP from a thread of its own: uvicorn's readiness pipe to each worker belongs to the supervisor's
    loop, and a worker takes longer to start than that pipe's health check waits.
    """

    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket], ready: Ready) -> None:
        super().__init__(config, sockets=sockets)
        self.ready = ready
        self.port = int(sockets[0].getsockname()[1])

    def init_processes(self) -> None:
        super().init_processes()
        threading.Thread(target=self._announce_once_answering, daemon=True).start()

    def _announce_once_answering(self) -> None:
        probe = f"{listening_url(self.config.host, self.port)}/livez"
        while not self.should_exit.wait(READY_POLL_SECONDS):
            try:
                answered = httpx.get(probe, timeout=READY_POLL_SECONDS * 10).status_code == httpx.codes.OK
            except httpx.TransportError:
                continue
            if answered:
                self.ready()
                return


def listen(host: str, port: int, named_by: str) -> socket.socket:
    """A listening socket on host:port that worker processes inherit; a clean error when it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family)
    except OSError as exc:
        typer.echo(f"error: cannot listen on {host}:{port} ({named_by}): {exc.strerror}", err=True)
        raise typer.Exit(2) from None
    sock.set_inheritable(True)
    return sock


def run_uvicorn(app: str, *, sandbox_port: int | None, announce: Announce, **options: Any) -> None:
    """What `uvicorn.run(app, **options)` does for `serve`, on the sandbox port too, announcing once the server
    answers. The app learns the sandbox port really bound from the environment, which its workers inherit."""
    config = uvicorn.Config(app, **options)
    sockets = [listen(config.host, config.port, "--port")]
    if sandbox_port is not None:
        sockets.append(listen(config.host, sandbox_port, SANDBOX_PORT_VARIABLE))
    ports = [int(sock.getsockname()[1]) for sock in sockets]
    os.environ[SANDBOX_PORT_VARIABLE] = str(ports[1]) if len(ports) > 1 else "0"
    ready = functools.partial(announce, ports[0], ports[1] if len(ports) > 1 else None)
    server = AnnouncingServer(config, ready)
    with suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl+C it shut down on, as `uvicorn.run` expects
        if config.workers > 1:
            AnnouncingMultiprocess(config, sockets, ready).run()
            return
        server.run(sockets=sockets)
    if not server.started:
        raise SystemExit(STARTUP_FAILURE)
