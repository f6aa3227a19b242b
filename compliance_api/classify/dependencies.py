"""What the classify endpoints read from the app, by slot (filled at start-up by `services.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance_api.classify.ruleset import Rulesets
from compliance_api.kit.registry import Slot, collaborator

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

RULESETS = Slot[Rulesets]("rulesets")


def rulesets_of(connection: HTTPConnection) -> Rulesets:
    """The rulesets this app weighs with (packaged, loaded once)."""
    return collaborator(connection, RULESETS)
