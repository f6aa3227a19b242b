"""Example requests and answers for the operations whose routes declare none, keyed by operation id.

The classify operations carry theirs on their routes (`classify/examples.py`); the 4xx problems of every operation
are written by `openapi/problems.py`. `tests/openapi/test_examples.py` fails when an operation lacks one, and
validates each against its schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compliance_api.openapi.examples import dac7, events, passport, platform, webhooks


@dataclass(frozen=True, slots=True)
class OperationExamples:
    """`responses`: status → answer; `request`: the JSON body; `parameters`: name → value."""

    responses: dict[str, Any]
    request: Any = None
    parameters: dict[str, Any] = field(default_factory=dict)


def _collect(*tables: dict[str, dict[str, Any]]) -> dict[str, OperationExamples]:
    collected: dict[str, OperationExamples] = {}
    for table in tables:
        for operation_id, parts in table.items():
            if operation_id in collected:
                raise ValueError(f"two example sets for {operation_id}")
            collected[operation_id] = OperationExamples(**parts)
    return collected


OPERATION_EXAMPLES = _collect(platform.EXAMPLES, passport.EXAMPLES, dac7.EXAMPLES, webhooks.EXAMPLES, events.EXAMPLES)


def add_operation_examples(operation: dict[str, Any]) -> None:
    """Put the operation's examples where generators and Swagger UI read them (media type and parameter)."""
    examples = OPERATION_EXAMPLES.get(operation.get("operationId", ""))
    if examples is None:
        return
    if examples.request is not None:
        media = operation["requestBody"]["content"]["application/json"]
        media["examples"] = {"example": {"summary": "A request", "value": examples.request}}
    for status, value in examples.responses.items():
        media = operation["responses"][status]["content"]["application/json"]
        media["example"] = value
    for parameter in operation.get("parameters", []):
        if parameter["name"] in examples.parameters:
            parameter["example"] = examples.parameters[parameter["name"]]
