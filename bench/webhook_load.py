"""First-attempt latency of a webhook test event in the embedded mode, on a machine under CPU load.

One `compliance-api serve` (SQLite, the webhook worker embedded, not pinned to a CPU) and a local receiver
(`receiver.py`, its own process). The bench creates one endpoint on the receiver, then sends
`POST /v1/webhook-endpoints/{id}/test` every `--interval` (0.5) seconds and takes, for each, the receiver's
`arrival - created_at` of the delivered body (the first attempt's latency; the request's own time is not in it).

Two phases in one run: `idle` (`--idle-seconds`, 10, nothing else running) is the baseline; `loaded`
(`--seconds`, 60) adds `--burners` (3) processes spinning on the CPU (load 3 on a 2-CPU machine) and a load
generator keeping `--connections` (8) requests to `POST /v1/classify/zelfstandigenwet` in flight (each writes an
audit row, a request-log row and an outbox event the worker dispatches). Prints p50/p90/p99/max per phase and the
loaded p99 against the idle one. Target: loaded p99 <= 5 s.

    .venv/bin/python bench/webhook_load.py [--seconds 60] [--burners 3] [--connections 8] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
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


def start_receiver(workdir: Path, slow_seconds: float = 2.0) -> str:
    """`receiver.py` in a process of its own; its base URL once it answers."""
    port = harness.free_port()
    argv = [sys.executable, "-m", "uvicorn", "receiver:app", "--app-dir", str(Path(__file__).parent)]
    argv += ["--port", str(port), "--log-level", "warning", "--backlog", "4096"]
    env = {"RECEIVER_SLOW_SECONDS": str(slow_seconds), "PATH": "/usr/bin:/bin"}
    harness.started(subprocess.Popen(argv, cwd=workdir, env=env, start_new_session=True))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/stats", timeout=0.5)
            return url
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the receiver did not start")


async def arrivals(receiver: str) -> list[dict[str, object]]:
    async with httpx.AsyncClient() as http:
        taken: list[dict[str, object]] = (await http.get(receiver + "/stats")).json()
        return taken


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


@dataclass
class Phase:
    name: str
    latencies: list[float]
    sent: int
    load_requests: str = "-"
    loadavg: str = ""

    def cells(self) -> list[object]:
        found = self.latencies
        if not found:
            return [self.name, self.sent, 0, "-", "-", "-", "-", self.load_requests, self.loadavg]
        return [
            self.name,
            self.sent,
            len(found),
            f"{statistics.median(found):.2f} s",
            f"{percentile(found, 0.9):.2f} s",
            f"{percentile(found, 0.99):.2f} s",
            f"{max(found):.2f} s",
            self.load_requests,
            self.loadavg,
        ]


HEADER = ("phase", "test events", "arrived", "p50", "p90", "p99", "max", "classify requests (ok/other)", "load avg")


async def probe(base: str, token: str, endpoint: str, receiver: str, seconds: float, interval: float) -> Phase:
    """Send a test event every `interval` for `seconds`; the first-attempt latency of each, once all arrived (or
    60 s after the last was sent)."""
    sent: set[str] = set()
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as api:

        async def one() -> None:
            answer = await api.post(f"/v1/webhook-endpoints/{endpoint}/test")
            answer.raise_for_status()
            sent.add(answer.json()["event_id"])

        tasks = []
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            tasks.append(asyncio.create_task(one()))
            await asyncio.sleep(interval)
        await asyncio.gather(*tasks)
    latencies: dict[str, float] = {}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not sent <= set(latencies):
        for arrival in await arrivals(receiver):
            if arrival["id"] in sent:
                latencies.setdefault(str(arrival["id"]), float(arrival["latency"]))  # type: ignore[arg-type]
        await asyncio.sleep(0.2)
    return Phase("", list(latencies.values()), len(sent), loadavg=harness.load_average())


def start_load(base: str, token: str, connections: int, burners: int) -> tuple[list[subprocess.Popen[bytes]], str]:
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
    return [*spinning, load], ""


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
    harness.cli(env, workdir, "migrate")
    email = f"bench-load-{uuid.uuid4().hex[:12]}@example.com"
    harness.cli(env, workdir, "users", "create", email, "--plan", "internal")
    token = harness.cli(env, workdir, "tokens", "create", email).splitlines()[-1].strip()
    receiver = start_receiver(workdir)
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
    processes, _ = start_load(server.base_url, token, args.connections, args.burners)
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
    parser.add_argument("--connections", type=int, default=8, help="Classify requests kept in flight (8).")
    parser.add_argument("--warmup", type=float, default=3, help="Seconds of load before the first test event (3).")
    parser.add_argument(
        "--subscribe",
        nargs="+",
        default=["classification.created"],
        help="What the endpoint subscribes to besides its test events (classification.created: the load's events "
        "are delivered to it too).",
    )
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
    if idle.latencies and loaded.latencies:
        p99 = percentile(loaded.latencies, 0.99)
        ratio = p99 / percentile(idle.latencies, 0.99)
        verdict = f"loaded p99 {p99:.2f} s = {ratio:.1f} x idle p99; target <= {TARGET_P99:g} s " + (
            "met" if p99 <= TARGET_P99 and len(loaded.latencies) == loaded.sent else "NOT MET"
        )
    lines = [
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), Python {info['python']}; load average before: "
        f"{info['loadavg']}",
        f"Command: `{' '.join(sys.argv)}`",
        "",
        *harness.table(HEADER, "lrrrrrrll", rows),
        "",
        verdict,
    ]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
