"""What reads the request log from the app, by slot (filled at start-up by `services.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance_api.kit.registry import Slot, collaborator
from compliance_api.requestlog.buffer import RequestLogBuffer

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

BUFFER = Slot[RequestLogBuffer]("request log buffer")


def buffer_of(connection: HTTPConnection) -> RequestLogBuffer:
    return collaborator(connection, BUFFER)
