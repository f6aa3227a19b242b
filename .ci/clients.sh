#!/usr/bin/env bash
# Generated clients: a Python client generated from the contract with openapi-python-client must generate without a
# warning and import every module (it once dropped the cross-border operation's models). The generator lives in a
# venv of its own: it pins typer < 0.28, which the service does not run on.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "openapi-python-client==0.29.1"
.venv/bin/compliance-api openapi > "$work/contract.json"
(
    cd "$work"
    PATH="$work/venv/bin:$PATH" "$work/venv/bin/openapi-python-client" generate --path contract.json \
        --output-path client --fail-on-warning
)
PYTHONPATH="$work/client" "$work/venv/bin/python" - <<'PY'
import importlib
import pkgutil

import compliance_api_client

modules = [m.name for m in pkgutil.walk_packages(compliance_api_client.__path__, "compliance_api_client.")]
for name in modules:
    importlib.import_module(name)
from compliance_api_client.api.classify import classify_cross_border, classify_zelfstandigenwet  # noqa: E402,F401

print(f"generated Python client: {len(modules)} modules import")
PY
