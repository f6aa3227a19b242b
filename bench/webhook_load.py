"""First-attempt latency of a webhook test event in the embedded mode, on a machine under CPU load.

One `compliance-api serve` (SQLite, the webhook worker embedded, not pinned to a CPU) and a local receiver
(`receiver.py`, its own process). The bench creates one endpoint on the receiver, subscribed to `--subscribe`
(`classification.created`: the load's events are delivered to it too, so the test events share the endpoint with a
stream of other deliveries), then sends
`POST /v1/webhook-endpoints/{id}/test` every `--interval` (0.5) seconds and takes, for each, the receiver's
`arrival - created_at` of the delivered body (the first attempt's latency; the request's own time is not in it).

Two phases in one run: `idle` (`--idle-seconds`, 10, nothing else running) is the baseline; `loaded`
(`--seconds`, 60) adds `--burners` (3) processes spinning on the CPU (load 3 on a 2-CPU machine) and a load
generator keeping `--connections` (64) requests to `POST /v1/classify/zelfstandigenwet` in flight (each writes an
audit row, a request-log row and an outbox event the worker dispatches). Prints p50/p90/p99/max per phase and the
loaded p99 against the idle one. Target: loaded p99 <= 5 s.

    .venv/bin/python bench/webhook_load.py [--seconds 60] [--burners 3] [--connections 64] [--markdown FILE]

`--code DIR` serves another checkout's package (`git archive COMMIT compliance_api | tar -x -C DIR`), for the
figures before a change.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import harness
import httpx

TARGET_P99 = 5.0
ROUTE = "/v1/classify/zelfstandigenwet"
BODY = {
    "engagement": {
        "hourly_rate_eur": 95,
        "months_duration": 12,
        "days_per_week": 5,
        "other_clients_count": 0,
        "own_tools": True,
        "own_liability": True,
        "sets_own_hours": False,
        "can_delegate": False,
        "profit_risk": False,
    }
}
BURNER = "while True: pass"
LOAD = """
import asyncio, signal, sys, httpx, orjson
url, token, connections, body = sys.argv[1], sys.argv[2], int(sys.argv[3]), orjson.loads(sys.argv[4])
done = {"ok": 0, "other": 0}
async def one(client, stop):
    while not stop.is_set():
        try:
            answer = await client.post(url, json=body, headers={"Authorization": f"Bearer {token}"})
            done["ok" if answer.status_code == 200 else "other"] += 1
        except httpx.HTTPError:
            done["other"] += 1
async def main():
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with httpx.AsyncClient(timeout=60) as client:
        await asyncio.gather(*(one(client, stop) for _ in range(connections)))
    print(orjson.dumps(done).decode(), flush=True)
asyncio.run(main())
"""


@dataclass
class Phase:
    name: str
    probed: harness.Probed
    load_requests: str = "-"
    loadavg: str = ""

    def cells(self) -> list[object]:
        probed = self.probed
        return [
            self.name,
            probed.sent,
            len(probed.latencies),
            probed.figure(0.5),
            probed.figure(0.9),
            probed.figure(0.99),
            probed.figure(1.0),
            self.load_requests,
            probed.other_arrivals["fast"],
            self.loadavg,
        ]


HEADER = (
    "phase",
    "test events",
    "arrived",
    "p50",
    "p90",
    "p99",
    "max",
    "classify requests (ok/other)",
    "other deliveries meanwhile",
    "load avg",
)


async def probe(base: str, token: str, endpoint: str, receiver: str, seconds: float, interval: float) -> Phase:
    async with httpx.AsyncClient() as http:
        await http.get(receiver + "/stats")  # forget earlier arrivals
    probed = await harness.probe_test_events(
        base, token, endpoint, receiver, seconds=seconds, interval=interval, grace=60
    )
    return Phase("", probed, loadavg=harness.load_average())


def start_load(base: str, token: str, connections: int, burners: int) -> list[subprocess.Popen[bytes]]:
    """The burners, and the load generator (last)."""
    spinning = [
        harness.started(subprocess.Popen([sys.executable, "-c", BURNER], start_new_session=True))
        for _ in range(burners)
    ]
    body = httpx.Request("POST", "/", json=BODY).content.decode()
    load = subprocess.Popen(
        [sys.executable, "-c", LOAD, base + ROUTE, token, str(connections), body],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    harness.started(load)
    return [*spinning, load]


def stop_load(processes: list[subprocess.Popen[bytes]]) -> str:
    *spinning, load = processes
    for process in spinning:
        process.kill()
        process.wait()
    load.terminate()
    out, _ = load.communicate(timeout=60)
    return out.decode().strip() or "-"


def run(args: argparse.Namespace, workdir: Path) -> list[Phase]:
    env = harness.base_env(workdir)
    env.update(COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS="true", COMPLIANCE_ACCESS_LOG="false")
    if args.code is not None:
        env["PYTHONPATH"] = str(args.code)
    harness.cli(env, workdir, "migrate")
    email = f"bench-load-{uuid.uuid4().hex[:12]}@example.com"
    harness.cli(env, workdir, "users", "create", email, "--plan", "internal")
    token = harness.cli(env, workdir, "tokens", "create", email).splitlines()[-1].strip()
    receiver = harness.start_receiver(workdir)
    server = harness.Server("embedded", env, workdir, None)
    server.start()
    made = httpx.post(
        server.base_url + "/v1/webhook-endpoints",
        json={"url": receiver + "/fast/test", "enabled_events": args.subscribe},
        headers={"Authorization": f"Bearer {token}"},
    )
    made.raise_for_status()
    endpoint = made.json()["id"]
    idle = asyncio.run(probe(server.base_url, token, endpoint, receiver, args.idle_seconds, args.interval))
    idle.name = "idle"
    print(f"idle:   {idle.cells()}", flush=True)
    processes = start_load(server.base_url, token, args.connections, args.burners)
    time.sleep(args.warmup)
    loaded = asyncio.run(probe(server.base_url, token, endpoint, receiver, args.seconds, args.interval))
    loaded.name = f"{args.burners} burners + {args.connections} classify connections"
    loaded.load_requests = stop_load(processes)
    print(f"loaded: {loaded.cells()}", flush=True)
    server.stop()
    return [idle, loaded]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60, help="Seconds of test events under load (60).")
    parser.add_argument("--idle-seconds", type=float, default=10, help="Seconds of test events without load (10).")
    parser.add_argument("--interval", type=float, default=0.5, help="Seconds between test events (0.5).")
    parser.add_argument("--burners", type=int, default=3, help="Processes spinning on the CPU (3).")
    parser.add_argument("--connections", type=int, default=64, help="Classify requests kept in flight (64).")
    parser.add_argument("--warmup", type=float, default=3, help="Seconds of load before the first test event (3).")
    parser.add_argument(
        "--subscribe",
        nargs="+",
        default=["classification.created"],
        help="What the endpoint subscribes to besides its test events (classification.created: the load's events "
        "are delivered to it too).",
    )
    parser.add_argument("--code", type=Path, help="Serve this checkout's compliance_api (figures before a change).")
    parser.add_argument("--markdown", type=Path, help="Also write the results as Markdown to this file.")
    args = parser.parse_args()
    harness.stop_on_signals()
    info = harness.machine(harness.load_average())
    with tempfile.TemporaryDirectory(prefix="bench-webhook-load-") as tmp:
        try:
            phases = run(args, Path(tmp))
        finally:
            harness.stop_all()
    rows = [phase.cells() for phase in phases]
    idle, loaded = phases
    verdict = "no arrivals"
    if idle.probed.latencies and loaded.probed.bounds():
        p99 = harness.percentile(loaded.probed.bounds(), 0.99)
        ratio = p99 / harness.percentile(idle.probed.latencies, 0.99)
        met = p99 <= TARGET_P99 and not loaded.probed.missing
        verdict = f"loaded p99 {loaded.probed.figure(0.99)} = {ratio:.1f} x idle p99; target <= {TARGET_P99:g} s " + (
            "met" if met else "NOT MET"
        )
    lines = [
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), Python {info['python']}; load average before: "
        f"{info['loadavg']}",
        f"Command: `{' '.join(sys.argv)}`",
        "",
        *harness.table(HEADER, "lrrrrrrlrl", rows),
        "",
        verdict,
    ]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
