"""Fair delivery: the first-attempt latency of one account's test events while another account replays 5,000 events
to an endpoint that answers after 2 s.

Per backend, one `compliance-api serve` and a local receiver (`receiver.py`, its own process; `/slow/…` answers after
`--slow-seconds`, 2). Anna has `--events` (5,000) `passport.updated` events, written to the outbox before her
endpoint existed (through the events service, as the API writes them); her endpoint is on the slow path. Bert's
endpoint is on the fast path. First `idle`: Bert sends a test event every `--interval` (1) s for `--idle-seconds`
(10), nothing else queued (the baseline). Then Anna replays all her events (`POST …/replay` with `since`, followed
by its cursor, 1,000 per request), and Bert sends test events for `--seconds` (60): `replay` is their first-attempt
latency (the receiver's `arrival - created_at`), with how many of Anna's events reached her endpoint meanwhile and
how many still wait. Target: p99 <= 5 s while Anna's backlog is still pending.

Backends: `sqlite` (a temporary file, the webhook worker embedded in `serve`) and `pg` (database
`BENCH_REPLAY_PG_DATABASE`, default `compliance_bench_replay`, emptied and migrated; `serve` without the worker, and
one `compliance-api worker` process). Nothing is pinned to a CPU.

    .venv/bin/python bench/replay_fairness.py [--backend sqlite|pg|both] [--events 5000] [--seconds 60]

`--code DIR` serves another checkout's package (`git archive COMMIT compliance_api | tar -x -C DIR`), for the
figures before a change; a replay without a cursor queues everything in one request there.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import harness
import httpx
from sqlalchemy import text

from compliance_api.config import Settings
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment

PG_DATABASE = os.environ.get("BENCH_REPLAY_PG_DATABASE", "compliance_bench_replay")
PG_URL = f"postgresql://postgres@127.0.0.1:5432/{PG_DATABASE}"
TARGET_P99 = 5.0
HEADER = (
    "backend",
    "phase",
    "test events",
    "arrived",
    "p50",
    "p90",
    "p99",
    "max",
    "Anna's events replayed",
    "requests to Anna's endpoint meanwhile",
    "load avg",
)


@dataclass
class Phase:
    backend: str
    name: str
    probed: harness.Probed
    replayed: int = 0
    loadavg: str = ""

    def cells(self) -> list[object]:
        probed = self.probed
        slow = probed.other_arrivals["slow"]
        return [
            self.backend,
            self.name,
            probed.sent,
            len(probed.latencies),
            probed.figure(0.5),
            probed.figure(0.9),
            probed.figure(0.99),
            probed.figure(1.0),
            self.replayed or "-",
            f"{slow} ({self.replayed - slow} still pending)" if self.replayed else "-",
            self.loadavg,
        ]

    def meets_target(self) -> bool:
        probed = self.probed
        backlog_left = self.replayed > probed.other_arrivals["slow"]
        return not probed.missing and harness.percentile(probed.latencies, 0.99) <= TARGET_P99 and backlog_left


def environment(backend: str, workdir: Path, code: Path | None) -> dict[str, str]:
    env = harness.base_env(workdir)
    env.update(COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS="true", COMPLIANCE_ACCESS_LOG="false")
    if backend == "pg":
        env.update(DATABASE_URL=PG_URL, COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER="false")
    if code is not None:
        env["PYTHONPATH"] = str(code)
    return env


async def reset_pg() -> None:
    await harness.ensure_pg_database(PG_DATABASE)
    engine = create_engine(Settings(database_url=PG_URL).resolved_database_url)
    async with engine.begin() as connection:
        await connection.execute(text("DROP SCHEMA public CASCADE"))
        await connection.execute(text("CREATE SCHEMA public"))
    await engine.dispose()


async def write_events(env: dict[str, str], owner: str, count: int) -> None:
    """`count` of the owner's `passport.updated` events, a minute old, in the outbox of the server's database."""
    settings = Settings(database_url=env.get("DATABASE_URL", ""), var_dir=Path(env["COMPLIANCE_VAR_DIR"]))
    engine = create_engine(settings.resolved_database_url)
    at = utcnow() - dt.timedelta(minutes=1)
    async with create_sessionmaker(engine).begin() as session:
        payload = {"freelancer_id": owner, "updated_at": at.isoformat(), "change": "sector", "sector": "ict"}
        batch = [events.NewEvent(EventName.PASSPORT_UPDATED, payload)] * count
        await events.emit_many(session, environment=Environment.live, events=batch, at=at)
    await engine.dispose()


def account(env: dict[str, str], workdir: Path, name: str) -> tuple[str, str]:
    """A new user's id and a production token."""
    email = f"bench-{name}-{uuid.uuid4().hex[:8]}@example.com"
    user_id = harness.cli(env, workdir, "users", "create", email, "--plan", "internal").splitlines()[-1].strip()
    token = harness.cli(env, workdir, "tokens", "create", email).splitlines()[-1].strip()
    return user_id, token


def endpoint(base: str, token: str, url: str) -> str:
    made = httpx.post(
        base + "/v1/webhook-endpoints",
        json={"url": url, "enabled_events": ["passport.updated"]},
        headers={"Authorization": f"Bearer {token}"},
    )
    made.raise_for_status()
    return str(made.json()["id"])


def replay_all(base: str, token: str, endpoint_id: str) -> int:
    """Anna's replay of the last hour, followed to its end; how many events it queued."""
    body: dict[str, object] = {"since": (utcnow() - dt.timedelta(hours=1)).isoformat()}
    replayed = 0
    while True:
        answer = httpx.post(
            f"{base}/v1/webhook-endpoints/{endpoint_id}/replay",
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
        answer.raise_for_status()
        found = answer.json()
        replayed += int(found["replayed"])
        if not found.get("has_more"):
            return replayed
        body["cursor"] = found["next_cursor"]


def run_backend(backend: str, args: argparse.Namespace, workdir: Path) -> list[Phase]:
    env = environment(backend, workdir, args.code)
    if backend == "pg":
        asyncio.run(reset_pg())
    harness.cli(env, workdir, "migrate")
    anna, anna_token = account(env, workdir, "anna")
    _, bert_token = account(env, workdir, "bert")
    asyncio.run(write_events(env, anna, args.events))
    receiver = harness.start_receiver(workdir, args.slow_seconds)
    server = harness.Server(backend, env, workdir, None)
    server.start()
    if backend == "pg":
        harness.started(subprocess.Popen([str(harness.CLI), "worker"], env=env, cwd=workdir, start_new_session=True))
    slow = endpoint(server.base_url, anna_token, receiver + "/slow/anna")
    fast = endpoint(server.base_url, bert_token, receiver + "/fast/bert")

    def probe(seconds: float) -> harness.Probed:
        httpx.get(receiver + "/stats")  # forget earlier arrivals
        return asyncio.run(
            harness.probe_test_events(
                server.base_url, bert_token, fast, receiver, seconds=seconds, interval=args.interval, grace=args.grace
            )
        )

    probe(args.interval / 2)  # one test event, not counted: the worker has started and claimed once
    idle = Phase(backend, "idle", probe(args.idle_seconds), loadavg=harness.load_average())
    print(harness.table_row(idle.cells()), flush=True)
    replayed = replay_all(server.base_url, anna_token, slow)
    loaded = Phase(backend, "Anna replays", probe(args.seconds), replayed, harness.load_average())
    print(harness.table_row(loaded.cells()), flush=True)
    harness.stop_all()
    return [idle, loaded]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "pg", "both"], default="both")
    parser.add_argument("--events", type=int, default=5000, help="Anna's events to replay (5,000).")
    parser.add_argument("--slow-seconds", type=float, default=2.0, help="How long Anna's endpoint takes (2).")
    parser.add_argument("--seconds", type=float, default=60, help="Seconds of Bert's test events during the replay.")
    parser.add_argument("--idle-seconds", type=float, default=10, help="Seconds of Bert's test events before it.")
    parser.add_argument("--interval", type=float, default=1.0, help="Seconds between Bert's test events (1).")
    parser.add_argument("--grace", type=float, default=60, help="Seconds to wait for the last test events (60).")
    parser.add_argument("--code", type=Path, help="Serve this checkout's compliance_api (figures before a change).")
    parser.add_argument("--markdown", type=Path, help="Also write the results as Markdown to this file.")
    args = parser.parse_args()
    harness.stop_on_signals()
    info = harness.machine(harness.load_average())
    phases: list[Phase] = []
    try:
        for backend in ("sqlite", "pg") if args.backend == "both" else (args.backend,):
            with tempfile.TemporaryDirectory(prefix=f"bench-replay-{backend}-") as tmp:
                phases += run_backend(backend, args, Path(tmp))
    finally:
        harness.stop_all()
    verdicts = [
        f"{phase.backend}: p99 {phase.probed.figure(0.99)} during the replay, Anna's backlog still pending: target "
        f"<= {TARGET_P99:g} s {'met' if phase.meets_target() else 'NOT MET'}"
        for phase in phases
        if phase.replayed
    ]
    lines = [
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), Python {info['python']}; load average before: "
        f"{info['loadavg']}",
        f"Command: `{' '.join(sys.argv)}`",
        "",
        *harness.table(HEADER, "llrrrrrrrll", [phase.cells() for phase in phases]),
        "",
        *verdicts,
    ]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
