"""What the webhooks endpoints read from the app, by slot (filled at start-up by `services.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance_api.kit.registry import Slot, collaborator
from compliance_api.webhooks.signing import SecretBox

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

SECRET_BOX = Slot[SecretBox]("webhook secrets")


def secret_box_of(connection: HTTPConnection) -> SecretBox:
    """Seals and opens the endpoints' signing secrets."""
    return collaborator(connection, SECRET_BOX)
