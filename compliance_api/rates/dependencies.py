"""What the rates endpoints read from the app, by slot (filled at start-up by `services.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance_api.kit.registry import Slot, collaborator
from compliance_api.rates.cache import BenchmarkCache

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

BENCHMARKS = Slot[BenchmarkCache]("rate benchmarks")


def benchmarks_of(connection: HTTPConnection) -> BenchmarkCache:
    return collaborator(connection, BENCHMARKS)
