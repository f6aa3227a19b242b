"""The frozen dated contracts, as committed under `openapi/contracts/`: read without the web framework, so that
`compliance-api openapi` loads FastAPI only when it generates a contract."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def frozen_contract(version: str) -> dict[str, Any] | None:
    """The contract frozen on `version` (a date), as committed under `openapi/contracts/`."""
    path = resources.files("compliance_api.openapi").joinpath("contracts", f"{version}.json")
    if not path.is_file():
        return None
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def frozen_versions() -> list[str]:
    folder = resources.files("compliance_api.openapi").joinpath("contracts")
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def dumps(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
