"""Fail unless both generated clients have every operation of the contract (a generator may skip one silently), and
unless every enum member of the Python client has a name (`VALUE_<n>` means the contract gave it none)."""

from __future__ import annotations

import enum
import importlib
import json
import pkgutil
import re
import sys
from pathlib import Path

METHODS = ("get", "post", "put", "patch", "delete")
NUMBERED = re.compile(r"VALUE_(NEGATIVE_)?[0-9]+")


def numbered_members(modules: list[str]) -> list[str]:
    """The enum members of the generated modules that the generator numbered for want of a name."""
    return [
        f"{cls.__name__}.{member.name}"
        for name in modules
        for cls in vars(sys.modules[name]).values()
        if isinstance(cls, type) and issubclass(cls, enum.Enum) and cls.__module__ == name
        for member in cls
        if NUMBERED.fullmatch(member.name)
    ]


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
    numbered = numbered_members(modules)
    if numbered:
        print(
            f"error: enum members without a name (give the enum x-enum-varnames): {', '.join(numbered)}",
            file=sys.stderr,
        )
    if any(missing.values()) or numbered:
        return 1
    print(f"generated clients: {len(operation_ids)} operations each (Python: {len(modules)} modules import)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))
