"""Validating values against the contract's schemas as the server reads them."""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import jsonschema_rs

from compliance_api.kit.schemas import VALIDATED_PER_ITEM


def validator(contract: dict[str, Any], schema: dict[str, Any]) -> jsonschema_rs.Validator:
    """A validator for a schema of the contract, whose `$ref`s resolve against the contract's components.

    An array marked `x-validated-per-item` (a batch's `items`) takes any item, as the server does: it answers an
    invalid item with its own problem, and the batch examples show one."""
    return jsonschema_rs.Draft202012Validator({**schema, "components": _any_item(deepcopy(contract["components"]))})


def _any_item(node: Any) -> Any:
    if isinstance(node, dict):
        for value in node.values():
            _any_item(value)
        if node.get(VALIDATED_PER_ITEM) is True:
            node["items"] = {}
    elif isinstance(node, list):
        for value in node:
            _any_item(value)
    return node
