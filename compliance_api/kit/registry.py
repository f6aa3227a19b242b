"""One app's long-lived collaborators, each in a typed slot that the module reading it declares.

A domain declares its slots and the functions that read them from a request in its own `dependencies.py`;
`services.py` fills every slot once at start-up. So the wiring imports the domains and no domain imports the wiring.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class Slot(Generic[T]):
    """Where the registry keeps one collaborator of type `T` (slots compare by identity, never by name)."""

    name: str


@dataclass(slots=True)
class Registry:
    """The collaborators of one app instance, by slot (`app.state.registry`)."""

    _filled: dict[Slot[Any], object] = field(default_factory=dict)

    def put(self, slot: Slot[T], collaborator: T) -> None:
        self._filled[slot] = collaborator

    def get(self, slot: Slot[T]) -> T:
        return cast("T", self._filled[slot])


def registry_of(connection: HTTPConnection) -> Registry:
    """The app's registry, from any request (set once when the app is made)."""
    registry: Registry = connection.app.state.registry
    return registry


def collaborator(connection: HTTPConnection, slot: Slot[T]) -> T:
    """The app's collaborator in `slot`, from any request: a plain function, so a hot route keeps no `Depends`."""
    return registry_of(connection).get(slot)
