"""What the keyed endpoints read from the app, by slot (filled at start-up by `services.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance_api.idempotency.service import Idempotency
from compliance_api.kit.registry import Slot, collaborator

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

IDEMPOTENCY = Slot[Idempotency]("idempotency")


def idempotency_of(connection: HTTPConnection) -> Idempotency:
    return collaborator(connection, IDEMPOTENCY)
