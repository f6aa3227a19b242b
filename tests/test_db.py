"""The engine: a failed statement's error, and so its log line, never carries the bound parameters."""

from __future__ import annotations

import traceback

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from compliance_api.config import Settings
from compliance_api.db import create_engine

MARKER = "sealed-secret-4f1c9e"


async def test_a_database_error_does_not_show_its_parameters(settings: Settings) -> None:
    engine = create_engine(settings.resolved_database_url)
    try:
        async with engine.connect() as connection:
            with pytest.raises(DBAPIError) as caught:
                await connection.execute(text("SELECT :value FROM no_such_table"), {"value": MARKER})
    finally:
        await engine.dispose()
    logged = "".join(traceback.format_exception(caught.value))
    assert "no_such_table" in logged
    assert MARKER not in logged
