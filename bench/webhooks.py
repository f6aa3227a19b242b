"""Webhook delivery benchmarks: deliveries per second from one worker, and event-to-delivery latency.

* `throughput`: `--events` (5,000) `wtta.admission.updated` events written in one transaction, then one in-process
  `Worker` loop (as `compliance-api worker` runs it) delivers them to a local receiver in another process (uvicorn,
  answers 204 at once). Time from the worker's start to the receiver's last arrival. Target: >= 300 deliveries/s.
* `latency`: the worker loop runs (default poll interval); events are written one per transaction at `--rate` (20)
  per second for `--seconds` (10); the receiver takes `arrival - event.created_at` per delivery. Target: p50 <= 1 s.

Backends: `sqlite` (a temporary file, the embedded mode) and `pg` (database `BENCH_PG_DATABASE`, default
`compliance_bench_webhooks`, created and migrated). Signing, sealing and the SSRF pin are all on the path measured.

    .venv/bin/python bench/webhooks.py [--backend sqlite|pg|both] [--events 5000] [--rate 20] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
import httpx
from sqlalchemy import text

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, UserKind
from compliance_api.config import Settings
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.migrate import upgrade
from compliance_api.webhooks import service, ssrf
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.worker import Worker

PG_DATABASE = os.environ.get("BENCH_PG_DATABASE", "compliance_bench_webhooks")

RECEIVER = """
import time, orjson
from datetime import datetime
state = {"count": 0, "last": 0.0, "latencies": []}
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["method"] == "GET":
        payload = orjson.dumps(state)
        state.update(count=0, last=0.0, latencies=[])
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": payload})
        return
    now = time.time()
    event = orjson.loads(body)
    state["count"] += 1
    state["last"] = now
    state["latencies"].append(now - datetime.fromisoformat(event["created_at"]).timestamp())
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})
"""


def start_receiver(workdir: Path) -> str:
    (workdir / "bench_receiver.py").write_text(RECEIVER)
    port = harness.free_port()
    harness.started(
        subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "bench_receiver:app", "--port", str(port), "--log-level", "warning"],
            cwd=workdir,
            start_new_session=True,  # its own process group, stopped by harness.stop_all()
        )
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            httpx.get(url, timeout=0.5)
            return url
        except httpx.TransportError:
            time.sleep(0.05)
    raise RuntimeError("the receiver did not start")


async def stats(url: str) -> dict[str, object]:
    async with httpx.AsyncClient() as http:
        loaded: dict[str, object] = (await http.get(url)).json()
        return loaded


async def prepare(database_url: str, var_dir: Path, receiver_url: str) -> Settings:
    settings = Settings(
        database_url=database_url, secret_key=harness.SECRET_KEY, var_dir=var_dir, webhooks_allow_private_targets=True
    )
    engine = create_engine(settings.resolved_database_url)
    if engine.dialect.name == "postgresql":
        async with engine.begin() as connection:
            await connection.execute(text("DROP SCHEMA public CASCADE"))
            await connection.execute(text("CREATE SCHEMA public"))
    await upgrade(engine)
    async with create_sessionmaker(engine).begin() as session:
        user = await accounts_service.create(session, email="bench@example.com", kind=UserKind.business, plan=Plan.pro)
        await service.create(
            session,
            service.EndpointOwner(user.id, Environment.live),
            url=f"{receiver_url}/hook",
            enabled_events=["wtta.admission.updated"],
            description="bench",
            enabled=True,
            policy=ssrf.policy_for(settings, Environment.live),
            box=SecretBox(settings.secret_key_bytes()),
            now=utcnow(),
        )
    await engine.dispose()
    return settings


def _event(n: int) -> events.NewEvent:
    return events.NewEvent(EventName.WTTA_ADMISSION_UPDATED, {"kvk_number": f"{n:08d}", "to_status": "admitted"})


async def throughput(settings: Settings, receiver_url: str, count: int) -> float:
    engine = create_engine(settings.resolved_database_url)
    sessionmaker = create_sessionmaker(engine)
    async with sessionmaker.begin() as session:
        await events.emit_many(session, environment=Environment.live, events=[_event(n) for n in range(count)])
    await stats(receiver_url)  # reset
    worker = Worker(settings, sessionmaker, SecretBox(settings.secret_key_bytes()))
    stop = asyncio.Event()
    started = time.time()
    task = asyncio.create_task(worker.run(stop))
    while True:
        await asyncio.sleep(0.5)
        state = await stats(receiver_url)  # resets: sum the counts
        count -= int(state["count"])  # type: ignore[call-overload]
        last = float(state["last"])  # type: ignore[arg-type]
        if count <= 0:
            break
    stop.set()
    await task
    await worker.close()
    await engine.dispose()
    return last - started


async def latency(settings: Settings, receiver_url: str, rate: float, seconds: float) -> list[float]:
    engine = create_engine(settings.resolved_database_url)
    sessionmaker = create_sessionmaker(engine)
    worker = Worker(settings, sessionmaker, SecretBox(settings.secret_key_bytes()))
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop))
    await stats(receiver_url)
    for n in range(int(rate * seconds)):
        async with sessionmaker.begin() as session:
            await events.emit(
                session, environment=Environment.live, type=EventName.WTTA_ADMISSION_UPDATED, payload={"n": n}
            )
        await asyncio.sleep(1 / rate)
    await asyncio.sleep(2)
    stop.set()
    await task
    await worker.close()
    await engine.dispose()
    found: list[float] = (await stats(receiver_url))["latencies"]  # type: ignore[assignment]
    return found


async def pg_database() -> str:
    await harness.ensure_pg_database(PG_DATABASE)
    return f"postgresql://postgres@127.0.0.1:5432/{PG_DATABASE}"


async def run_backend(backend: str, arguments: argparse.Namespace, workdir: Path, receiver_url: str) -> None:
    url = f"sqlite:///{workdir / 'bench.db'}" if backend == "sqlite" else await pg_database()
    settings = await prepare(url, workdir / f"var-{backend}", receiver_url)
    elapsed = await throughput(settings, receiver_url, arguments.events)
    print(
        f"{backend}: throughput {arguments.events} deliveries in {elapsed:.2f} s = {arguments.events / elapsed:.0f}/s"
    )
    found = sorted(await latency(settings, receiver_url, arguments.rate, arguments.seconds))
    p50 = statistics.median(found)
    p99 = found[min(len(found) - 1, int(len(found) * 0.99))]
    print(
        f"{backend}: latency over {len(found)} events at {arguments.rate}/s: "
        f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "pg", "both"], default="both")
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        harness.stop_on_signals()
        receiver_url = start_receiver(workdir)
        try:
            for backend in ("sqlite", "pg") if arguments.backend == "both" else (arguments.backend,):
                asyncio.run(run_backend(backend, arguments, workdir, receiver_url))
        finally:
            harness.stop_all()


if __name__ == "__main__":
    main()
