"""Fail unless both generated clients have every operation of the contract (a generator may skip one silently)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import sys
from pathlib import Path

METHODS = ("get", "post", "put", "patch", "delete")


def main(out: Path) -> int:
    contract = json.loads((out / "contract.json").read_text())
    operation_ids = {
        operation["operationId"]
        for item in contract["paths"].values()
        for method, operation in item.items()
        if method in METHODS
    }
    sys.path.insert(0, str(out / "python"))
    package = importlib.import_module("compliance_api_client")
    modules = [info.name for info in pkgutil.walk_packages(package.__path__, "compliance_api_client.")]
    for name in modules:
        importlib.import_module(name)  # it once generated a module importing a model it had dropped
    python_operations = {name.rsplit(".", 1)[-1] for name in modules if name.startswith("compliance_api_client.api.")}
    types = (out / "typescript" / "schema.d.ts").read_text()
    section = types.split("export interface operations {", 1)[1]
    typescript_operations = set(re.findall(r'^    "?([A-Za-z0-9_-]+)"?: \{', section, flags=re.MULTILINE))
    missing = {
        "Python": sorted(i for i in operation_ids if i.replace("-", "_") not in python_operations),
        "TypeScript": sorted(operation_ids - typescript_operations),
    }
    for language, ids in missing.items():
        if ids:
            print(f"error: the {language} client lacks {', '.join(ids)}", file=sys.stderr)
    if any(missing.values()):
        return 1
    print(f"generated clients: {len(operation_ids)} operations each (Python: {len(modules)} modules import)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))
