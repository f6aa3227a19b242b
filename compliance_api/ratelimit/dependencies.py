"""What reads the rate limiter from the app, by slot (filled at start-up by `services.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance_api.kit.registry import Slot, collaborator
from compliance_api.ratelimit.limiter import Limiter

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

LIMITER = Slot[Limiter]("limiter")


def limiter_of(connection: HTTPConnection) -> Limiter:
    return collaborator(connection, LIMITER)
