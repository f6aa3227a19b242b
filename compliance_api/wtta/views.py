"""The WTTA cache's rows as the API's schemas."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compliance_api.kit.environment import Environment
from compliance_api.wtta.models import WttaStatusChange
from compliance_api.wtta.schemas import StatusChangeOut, WttaAdmissionOut, WttaHistoryOut


def admission_json(row: dict[str, Any], environment: Environment) -> str:
    """The admission as the API's JSON, serialised here once: returning the model would make FastAPI validate it a
    second time (hot path). A row of the reader is a dict of the table's columns; one of the ORM says `livemode`
    itself (EnvironmentOwned)."""
    found = {**row, "livemode": environment is Environment.live} if isinstance(row, dict) else row
    return WttaAdmissionOut.model_validate(found).model_dump_json()


def history(kvk: str, changes: Sequence[WttaStatusChange], environment: Environment) -> WttaHistoryOut:
    return WttaHistoryOut(
        kvk_number=kvk,
        changes=[StatusChangeOut.model_validate(c) for c in changes],
        livemode=environment is Environment.live,
    )
