#!/usr/bin/env bash
# Contract tests: schemathesis against a live `compliance-api serve` on a fresh, temporary SQLite database.
# Runs twice: production (sk_live_ token) and sandbox (sk_test_ token, `Host: sandbox.localhost`).
# Reports (JUnit, HAR with secrets filtered) go to test-artifacts/schemathesis/ (git-ignored).
# Tunables: SCHEMATHESIS_MAX_EXAMPLES (default 50), SCHEMATHESIS_SEED (default: random, printed by schemathesis).
# To replay a failure locally (server running): .venv/bin/schemathesis --config-file .ci/schemathesis.toml replay <id>.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BIN=.venv/bin
MAX_EXAMPLES="${SCHEMATHESIS_MAX_EXAMPLES:-50}"
REPORT_DIR="${SCHEMATHESIS_REPORT_DIR:-test-artifacts/schemathesis}"

# A private environment for the server and the CLI: SQLite under a temporary var dir, no Redis.
WORK="$(mktemp -d)"
unset DATABASE_URL REDIS_URL
export COMPLIANCE_VAR_DIR="$WORK/var"
COMPLIANCE_SECRET_KEY="$("$BIN/python" -c 'import secrets; print(secrets.token_urlsafe(48))')"
export COMPLIANCE_SECRET_KEY
export COMPLIANCE_ACCESS_LOG=false

SERVER_PID=""
cleanup() {
    # Stop the server: SIGTERM, up to 10 s for a graceful shutdown, then SIGKILL.
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 20); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.5; done
        kill -9 "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# Schema, an `internal` user (never rate limited) and one token per environment.
"$BIN/compliance-api" migrate
"$BIN/compliance-api" users create ci@example.com --plan internal >/dev/null
LIVE_TOKEN="$("$BIN/compliance-api" tokens create ci@example.com --name ci-live)"
TEST_TOKEN="$("$BIN/compliance-api" tokens create ci@example.com --name ci-sandbox --env test)"

# Two free ports (production, and the sandbox's own port), then the server in the background; its output goes to a
# log printed on failure.
read -r PORT SANDBOX_PORT < <("$BIN/python" -c '
import socket
probes = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
print(*(probe.getsockname()[1] for probe in probes))
for probe in probes:
    probe.close()')
BASE="http://127.0.0.1:$PORT"
SANDBOX="http://127.0.0.1:$SANDBOX_PORT"
COMPLIANCE_SANDBOX_PORT="$SANDBOX_PORT" "$BIN/compliance-api" serve --host 127.0.0.1 --port "$PORT" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!

server_log() {
    echo "---- server log ----" >&2
    cat "$WORK/server.log" >&2 || true
    echo "--------------------" >&2
}

# Wait up to ~30 s for /livez.
for _ in $(seq 1 60); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "error: the server exited before answering /livez" >&2
        server_log
        exit 1
    fi
    if curl -fsS --max-time 2 "$BASE/livez" >/dev/null 2>&1; then break; fi
    sleep 0.5
done
curl -fsS --max-time 2 "$BASE/livez" >/dev/null || { echo "error: $BASE/livez did not answer in 30 s" >&2; server_log; exit 1; }
echo "server up at $BASE (pid $SERVER_PID)"

# One schemathesis run with every default check; a failure exits non-zero and ends the script.
run_schemathesis() {
    local name="$1" base="$2"
    shift 2
    echo
    echo "---- schemathesis: $name ----"
    local args=(
        --config-file .ci/schemathesis.toml run "$base/openapi.json"
        --max-examples "$MAX_EXAMPLES"
        --generation-database none
        --report "junit,har" --report-junit-path "$REPORT_DIR/$name.xml" --report-har-path "$REPORT_DIR/$name.har"
    )
    if [ -n "${SCHEMATHESIS_SEED:-}" ]; then args+=(--seed "$SCHEMATHESIS_SEED"); fi
    local rc=0
    "$BIN/schemathesis" "${args[@]}" "$@" || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "error: schemathesis ($name) failed (exit $rc)" >&2
        server_log
        return "$rc"
    fi
}

# Sanity check: each token must authenticate in its environment, or the runs below would test only 401s.
expect_200() {
    local name="$1" base="$2" status
    shift 2
    status="$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "$@" "$base/v1/health")"
    if [ "$status" != "200" ]; then
        echo "error: GET /v1/health with the $name token answered $status, not 200" >&2
        server_log
        exit 1
    fi
}
expect_200 production "$BASE" -H "Authorization: Bearer $LIVE_TOKEN"
expect_200 sandbox "$SANDBOX" -H "Authorization: Bearer $TEST_TOKEN"
expect_200 sandbox-by-host "$BASE" -H "Authorization: Bearer $TEST_TOKEN" -H "Host: sandbox.localhost"

mkdir -p "$REPORT_DIR"
run_schemathesis production "$BASE" -H "Authorization: Bearer $LIVE_TOKEN"
run_schemathesis sandbox "$SANDBOX" -H "Authorization: Bearer $TEST_TOKEN"
echo
echo "schemathesis: production and sandbox passed"
