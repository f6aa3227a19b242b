#!/usr/bin/env bash
# The container image and compose.yaml (docs/operate/deploy.md, "Containers"), smoke-tested the way an operator runs
# them: compose.yaml itself brings up PostgreSQL, Redis, the migration, two API processes and the worker, all from the
# image in production mode; then /v1/health on both API processes, one classification, and one webhook delivered by
# the worker. Prints the image's size and its cold start (`podman run` to healthy) for bench/RESULTS.md.
#
# Registries of images cannot be reached from CI's machines, so the bases come from Debian's packages: a minbase
# Debian with Python (debootstrap), and on it a PostgreSQL and a Redis image (.ci/images/); compose.yaml's image
# variables point at them, and .ci/compose.ci.yaml adds the webhook receiver. podman runs the containers (runc, as
# root, as CI runs). Compose is Debian's docker-compose against podman's Docker API: podman-compose 1.6 with Debian's
# podman 4.3 ignores `condition: service_healthy` and fails on the migration's dependency chain. podman runs health
# checks from systemd timers, and CI's machines have no systemd, so this script runs them itself every 2 s.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SUITE="bookworm"
PROJECT="cicomplianceapi"
BASE="localhost/ci-debian-python:$SUITE"
IMAGE="localhost/compliance-api:ci"

packages="podman runc debootstrap openssl docker-compose"
# shellcheck disable=SC2086
if ! dpkg -s $packages >/dev/null 2>&1; then
    apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
fi
export CONTAINERS_CONF="$PWD/.ci/images/containers.conf"

work="$(mktemp -d)"
export DOCKER_HOST="unix://$work/podman.sock"
compose() { docker-compose -p "$PROJECT" -f compose.yaml -f .ci/compose.ci.yaml "$@"; }
background=()
remove_leftovers() {
    podman ps -a --filter "name=^${PROJECT}_" --format '{{.Names}}' | xargs -r podman rm -f >/dev/null 2>&1 || true
    podman network rm -f "${PROJECT}_default" >/dev/null 2>&1 || true
    for volume in postgres redis keys; do podman volume rm -f "${PROJECT}_$volume" >/dev/null 2>&1 || true; done
}
cleanup() {
    local rc=$?
    if [ "$rc" -ne 0 ] && [ -S "$work/podman.sock" ]; then compose logs --tail 40 >&2 2>&1 || true; fi
    podman rm -f ci-cold-start >/dev/null 2>&1 || true  # first: it holds compose's network and keys volume
    if [ -S "$work/podman.sock" ]; then compose down -v >/dev/null 2>&1 || true; fi
    remove_leftovers
    for pid in "${background[@]}"; do kill "$pid" 2>/dev/null || true; done
    podman rmi -f "$IMAGE-trusting" "$IMAGE" localhost/ci-postgres localhost/ci-redis "$BASE" >/dev/null 2>&1 || true
    podman image prune -f >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
elapsed() { python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$1"; }

podman system service --time=0 "$DOCKER_HOST" >"$work/podman-service.log" 2>&1 &
background+=("$!")
run_health_checks() {
    while true; do
        for container in $(podman ps --filter health=starting --format '{{.Names}}') \
            $(podman ps --filter health=healthy --format '{{.Names}}') \
            $(podman ps --filter health=unhealthy --format '{{.Names}}'); do
            podman healthcheck run "$container" >/dev/null 2>&1 || true
        done
        sleep 2
    done
}
run_health_checks &
background+=("$!")

echo "base images from Debian's packages"
started="$(date +%s.%N)"
mirror="$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates "$SUITE" "$work/rootfs" \
    ${mirror:+"$mirror"} >"$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
# The machine's CA bundle: it trusts whatever sits between this machine and the package registries.
cp /etc/ssl/certs/ca-certificates.crt "$work/rootfs/etc/ssl/certs/ca-certificates.crt"
tar -C "$work/rootfs" -c . |
    podman import --quiet --change "ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt" - "$BASE" >/dev/null
rm -rf "$work/rootfs"
build() { podman build --quiet "$@" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }; }
for service in postgres redis; do
    build --network host --build-arg BASE="$BASE" -t "localhost/ci-$service" -f ".ci/images/$service.Containerfile" \
        .ci/images
done
echo "  $(elapsed "$started") s"

echo "the image (Dockerfile, PYTHON_IMAGE=$BASE)"
started="$(date +%s.%N)"
build --network host --format docker --build-arg PYTHON_IMAGE="$BASE" -t "$IMAGE" .
size="$(podman image inspect --format '{{.Size}}' "$IMAGE")"
echo "  $(elapsed "$started") s; image size $((size / 1000000)) MB"

# The receiver's certificate, and the worker's image trusting it (see .ci/images/trusting.Containerfile).
mkdir -p "$work/receiver"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=receiver" -addext "subjectAltName=DNS:receiver" \
    -keyout "$work/receiver/key.pem" -out "$work/receiver/cert.pem" 2>/dev/null
chmod a+r "$work/receiver/key.pem"
cp .ci/images/receiver.py "$work/receiver/"
build --format docker --build-arg IMAGE="$IMAGE" -t "$IMAGE-trusting" -f .ci/images/trusting.Containerfile "$work/receiver"

read -r api_1_port api_2_port < <(python3 -c '
import socket
probes = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
print(*(probe.getsockname()[1] for probe in probes))
for probe in probes:
    probe.close()')
export COMPLIANCE_IMAGE="$IMAGE" POSTGRES_IMAGE="localhost/ci-postgres" REDIS_IMAGE="localhost/ci-redis"
export CI_BASE_IMAGE="$BASE" CI_WORKER_IMAGE="$IMAGE-trusting" CI_RECEIVER_DIR="$work/receiver"
export API_1_PORT="$api_1_port" API_2_PORT="$api_2_port"
export COMPLIANCE_PUBLIC_BASE_URL="http://127.0.0.1:$api_1_port"
POSTGRES_PASSWORD="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
COMPLIANCE_SECRET_KEY="$(python3 -c 'import secrets; print(secrets.token_urlsafe(48))')"
export POSTGRES_PASSWORD COMPLIANCE_SECRET_KEY

echo "compose up (compose.yaml + .ci/compose.ci.yaml, docker-compose $(docker-compose version --short))"
started="$(date +%s.%N)"
remove_leftovers  # what a stopped run may have left: a PostgreSQL volume with another password, the network
compose up -d >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; exit 1; }
healthy() { curl -fs "http://127.0.0.1:$1/livez" >/dev/null; }
for _ in $(seq 1 180); do
    if healthy "$api_1_port" && healthy "$api_2_port"; then break; fi
    sleep 1
done
healthy "$api_1_port" && healthy "$api_2_port" || { echo "error: the API did not answer within 180 s" >&2; exit 1; }
echo "  both API processes answer after $(elapsed "$started") s"
[ "$(podman inspect --format '{{.State.ExitCode}}' "${PROJECT}_migrate_1")" = 0 ]
for service in postgres redis api-1 api-2 worker; do
    for _ in $(seq 1 60); do
        if [ "$(podman inspect --format '{{.State.Health.Status}}' "${PROJECT}_${service}_1")" = healthy ]; then break; fi
        sleep 1
    done
    status="$(podman inspect --format '{{.State.Health.Status}}' "${PROJECT}_${service}_1")"
    [ "$status" = healthy ] || { echo "error: $service is $status" >&2; exit 1; }
done
echo "  postgres, redis, api-1, api-2 and worker are healthy; migrate exited 0"

api() { podman exec "${PROJECT}_api-1_1" compliance-api "$@"; }
api users create ci@example.com --plan pro >/dev/null
token="$(api tokens create ci@example.com --env live)"
call() {
    curl -fsS -H "Authorization: Bearer $token" -H "Content-Type: application/json" "$@"
}
for port in "$api_1_port" "$api_2_port"; do
    call "http://127.0.0.1:$port/v1/health" | python3 -c '
import json, sys
health = json.load(sys.stdin)
assert health["status"] == "ok", health'
done
echo "  /v1/health is ok on both API processes (PostgreSQL and Redis reached)"

call -X POST "http://127.0.0.1:$api_1_port/v1/classify/cross-border" \
    -d '{"country": "DE", "criteria": {"subject_to_instructions": true, "integrated_in_client_organisation": true,
         "fixed_working_hours": true, "no_entrepreneurial_risk": true}}' |
    python3 -c '
import json, sys
verdict = json.load(sys.stdin)
assert verdict["verdict"] == "unsafe", verdict
print("  one classification:", verdict["verdict"])'

endpoint="$(call -X POST "http://127.0.0.1:$api_2_port/v1/webhook-endpoints" \
    -d '{"url": "https://receiver:8443/hook", "enabled_events": ["*"]}' |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')"
call -X POST "http://127.0.0.1:$api_1_port/v1/webhook-endpoints/$endpoint/test" >/dev/null
for _ in $(seq 1 60); do
    if podman logs "${PROJECT}_receiver_1" 2>/dev/null | grep -q "^delivered "; then break; fi
    sleep 1
done
podman logs "${PROJECT}_receiver_1" 2>/dev/null | grep "^delivered " | sed 's/^/  the worker /' | grep . ||
    { echo "error: no webhook reached the receiver within 60 s" >&2; podman logs "${PROJECT}_worker_1" >&2; exit 1; }

# Cold start: one more API container from the image, on compose's network, from `podman run` to healthy.
started="$(date +%s.%N)"
podman run -d --name ci-cold-start --network "${PROJECT}_default" \
    -e DATABASE_URL="postgresql://compliance:$POSTGRES_PASSWORD@postgres:5432/compliance" \
    -e REDIS_URL="redis://redis:6379/0" -e COMPLIANCE_SECRET_KEY="$COMPLIANCE_SECRET_KEY" \
    -e COMPLIANCE_PUBLIC_BASE_URL="$COMPLIANCE_PUBLIC_BASE_URL" \
    -v "${PROJECT}_keys:/var/lib/compliance-api/keys" "$IMAGE" >/dev/null 2>"$work/cold-start.log" ||
    { cat "$work/cold-start.log" >&2; exit 1; }
for _ in $(seq 1 600); do
    if podman healthcheck run ci-cold-start >/dev/null 2>&1; then break; fi
    sleep 0.1
done
podman healthcheck run ci-cold-start >/dev/null || { podman logs ci-cold-start >&2; exit 1; }
echo "image: $((size / 1000000)) MB; cold start (podman run to healthy): $(elapsed "$started") s"
