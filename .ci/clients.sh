#!/usr/bin/env bash
# Generated clients: the Python client (openapi-python-client) and the TypeScript types (openapi-typescript, with
# openapi-fetch) generate from the newest frozen contract without a warning or a skipped operation (`make clients`),
# the TypeScript, and the TypeScript examples of the README and the client guide, type-check strictly, and a smoke
# test through each client calls every operation of the contract against a live server with the sandbox fixtures
# (clients/smoke.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash clients/generate.sh
clients/typescript/node_modules/.bin/tsc --noEmit -p clients/typescript
# The TypeScript examples of the README and the client guide compile as written, under the same settings.
.venv/bin/python clients/doc_examples.py var/clients/doc-examples
clients/typescript/node_modules/.bin/tsc -p var/clients/doc-examples
bash clients/smoke.sh
