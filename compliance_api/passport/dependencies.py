"""What the passport endpoints read from the app, by slot (filled at start-up by `services.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance_api.kit.registry import Slot, collaborator
from compliance_api.passport.hot_path import HotPath
from compliance_api.passport.signing import SigningKeys

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

HOT_PATH = Slot[HotPath]("passport hot path")
SIGNING_KEYS = Slot[SigningKeys]("signing keys")


def hot_path_of(connection: HTTPConnection) -> HotPath:
    return collaborator(connection, HOT_PATH)


def signing_keys_of(connection: HTTPConnection) -> SigningKeys:
    return collaborator(connection, SIGNING_KEYS)
