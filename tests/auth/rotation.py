"""An app serving the test database with other secrets, as after an operator rotated `COMPLIANCE_SECRET_KEY`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from httpx import ASGITransport, AsyncClient
from pydantic import SecretStr

from compliance_api.config import Settings
from tests.conftest import SECRET, running_app

NEW_SECRET = "rotated-secret-X_7IL5ShmeKixGqVJDXC-HYaKRb61AVd"


@asynccontextmanager
async def serving(
    settings: Settings, *, current: str, previous: str = "", host: str = "api.test"
) -> AsyncIterator[AsyncClient]:
    """A client of a fresh app (fresh token cache) whose current and previous secrets are the given ones."""
    rotated = settings.model_copy(update={"secret_key": SecretStr(current), "secret_key_previous": SecretStr(previous)})
    async with running_app(rotated) as application:
        async with AsyncClient(transport=ASGITransport(app=application), base_url=f"http://{host}") as http:
            yield http


__all__ = ["NEW_SECRET", "SECRET", "serving"]
