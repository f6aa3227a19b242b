#!/usr/bin/env bash
# Smoke tests of the generated clients (after clients/generate.sh): a server on a free port with a throwaway SQLite
# database and the demo's sandbox fixtures, then every operation of the contract through each client.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

OUT="var/clients"
work="$(mktemp -d)"
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

unset DATABASE_URL REDIS_URL
export COMPLIANCE_VAR_DIR="$work/var" COMPLIANCE_ACCESS_LOG=false
export COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS=true
# Two free ports: production, and the sandbox's own port, which the clients reach by base URL alone (the served
# contract's `servers[1]`), as Node's fetch cannot choose a Host header.
read -r port sandbox_port < <(.venv/bin/python -c '
import socket
probes = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
print(*(probe.getsockname()[1] for probe in probes))
for probe in probes:
    probe.close()')
export COMPLIANCE_SANDBOX_PORT="$sandbox_port"
base="http://127.0.0.1:$port"
.venv/bin/compliance-api migrate >/dev/null
.venv/bin/compliance-api demo --json >"$work/demo.json"
.venv/bin/compliance-api serve --port "$port" >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do
    if curl -fs "$base/livez" >/dev/null; then break; fi
    kill -0 "$server" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
    sleep 0.1
done
curl -fs "$base/livez" >/dev/null || { echo "error: the server did not answer within 30 s" >&2; exit 1; }

clients/typescript/node_modules/.bin/tsc -p clients/typescript --noCheck  # type-checked by .ci/clients.sh
# The wheel installs (its dependencies, httpx, attrs and httpx-retries, are in the generator's venv too).
"$OUT/generator/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$OUT"/dist/*.whl
"$OUT/generator/bin/python" clients/python/smoke.py "$base" "$work/demo.json" "$OUT/contract.json"
"$OUT/generator/bin/python" clients/python/sdk_smoke.py "$base" "$work/demo.json"
node clients/typescript/dist/smoke.js "$base" "$work/demo.json" "$OUT/contract.json"
node clients/typescript/dist/sdk_smoke.js "$base" "$work/demo.json"
