"""A real HTTP receiver for deliveries: records every request, answers from a script (default 200 with JSON)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TypeVar

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    received: list[Received] = field(default_factory=list)
    answers: list[Response] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: Request) -> Response:
        self.received.append(Received(request.url.path, dict(request.headers), await request.body()))
        self.arrived.set()
        return self.answers.pop(0) if self.answers else Response('{"ok":true}', media_type="application/json")


R = TypeVar("R", bound=Receiver)


@asynccontextmanager
async def receiving(kind: type[R]) -> AsyncIterator[R]:
    """Serve on 127.0.0.1 (any free port) in this event loop; connections queue on the bound socket until it runs."""
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(1024)
    box = kind(url=f"http://127.0.0.1:{listening.getsockname()[1]}/hook")
    app = Starlette(routes=[Route("/{path:path}", box.handle, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[listening]))
    try:
        yield box
    finally:
        server.should_exit = True
        await task
