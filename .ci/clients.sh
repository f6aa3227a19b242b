#!/usr/bin/env bash
# Generated clients: the Python client (openapi-python-client) and the TypeScript types (openapi-typescript, with
# openapi-fetch) generate from the newest frozen contract without a warning or a skipped operation (`make clients`),
# the TypeScript type-checks strictly, and a smoke test through each client calls every operation of the contract
# against a live server with the sandbox fixtures, then checks each client's SDK layer (retries against a server
# answering 429 and then 200, Idempotency-Keys, problems, paging) from its built package (clients/smoke.sh). The examples of the README and the guide run
# in the test suite (tests/test_doc_examples.py), which CI runs after this step, with these clients generated.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash clients/generate.sh
clients/typescript/node_modules/.bin/tsc --noEmit -p clients/typescript
bash clients/smoke.sh
