"""What the WTTA endpoints read from the app, by slot (filled at start-up by `services.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance_api.kit.registry import Slot, collaborator
from compliance_api.wtta.reader import LookupReader

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

READER = Slot[LookupReader | None]("wtta lookup reader")


def reader_of(connection: HTTPConnection) -> LookupReader | None:
    """The in-memory lookup reader, or None where the register is read from the database each time."""
    return collaborator(connection, READER)
