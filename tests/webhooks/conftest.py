"""Webhook test wiring: private targets allowed (the receiver is on 127.0.0.1), a real HTTP receiver, accounts."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import uvicorn
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from compliance_api.accounts.models import User
from compliance_api.config import Settings
from compliance_api.kit.environment import Environment
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.worker import Worker
from tests.conftest import SECRET
from tests.factories import bearer, create_token, create_user


@pytest.fixture
def settings(database_url: str, var_dir: Path) -> Settings:
    return Settings(
        database_url=database_url,
        redis_url=os.environ.get("REDIS_URL", ""),
        secret_key=SECRET,
        var_dir=var_dir,
        public_base_url="http://api.test",
        webhooks_allow_private_targets=True,
    )


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A real HTTP server that records every request and answers from a script (default 200)."""

    url: str
    received: list[Received] = field(default_factory=list)
    answers: list[Response] = field(default_factory=list)

    async def handle(self, request: Request) -> Response:
        self.received.append(Received(request.url.path, dict(request.headers), await request.body()))
        return self.answers.pop(0) if self.answers else Response('{"ok":true}', media_type="application/json")


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(128)
    box = Receiver(url=f"http://127.0.0.1:{listening.getsockname()[1]}/hook")
    app = Starlette(routes=[Route("/{path:path}", box.handle, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[listening]))  # connections queue on the bound socket meanwhile
    yield box
    server.should_exit = True
    await task


@dataclass(frozen=True, slots=True)
class Account:
    user: User
    live: dict[str, str]
    test: dict[str, str]


MakeAccount = Callable[[], Awaitable[Account]]


@pytest.fixture
def make_account(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> MakeAccount:
    async def make() -> Account:
        user = await create_user(sessionmaker)
        _, live = await create_token(sessionmaker, pepper, user=user)
        _, test = await create_token(sessionmaker, pepper, user=user, environment=Environment.test)
        return Account(user, bearer(live), bearer(test))

    return make


@pytest.fixture
async def worker(settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncIterator[Worker]:
    delivery = Worker(settings, sessionmaker, SecretBox(settings.secret_key_bytes()))
    yield delivery
    await delivery.close()
