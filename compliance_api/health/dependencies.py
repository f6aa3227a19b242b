"""What the health endpoints read from the app, by slot (filled at start-up by `services.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance_api.health.probe import HealthProbe
from compliance_api.kit.registry import Slot, collaborator

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

PROBE = Slot[HealthProbe]("health probe")


def probe_of(connection: HTTPConnection) -> HealthProbe:
    return collaborator(connection, PROBE)
