"""Floods that used to hold every tenant up: another tenant's `GET /v1/classifications` latency while one user floods
the service, and the size of what a keyed batch of bad items stores.

Each flood runs against one server (`compliance-api serve`, access log on): `--backend sqlite` (the default: SQLite,
the default pool of 10 connections) or `--backend postgres` (PostgreSQL + Redis, as in production: the database
`BENCH_FLOOD_PG_DATABASE`, default `compliance_bench_flood`, created if missing and migrated; Redis
`BENCH_FLOOD_REDIS_URL`, default `redis://127.0.0.1:6379/13`; the webhook worker not embedded), with `--workers`
processes (more than one needs `--backend postgres`). The other tenant (a `pro` API token of its own) asks
`GET /v1/classifications` at least `--probes` times, one after the other, first alone (the baseline), then while the
flood runs (at most 20 a second), until every request of the flood is answered. Prints the other tenant's median and
worst latency in each phase, their ratio, and the status counts of the flood. Target: worst latency during the flood
under 1 s.

`dossiers`: a self-registered user signs up in the dashboard, classifies one engagement, then downloads the verdict's
dossier PDF from the dashboard `--flood` times at once (the attack's size: 40).

`bodies`: a `pro` tenant posts `--flood` bodies of just under 1 MiB to `POST /v1/classify/zelfstandigenwet` at once,
each with 90,000 unknown `engagement` fields (6). Also prints the largest answer.

`webhooks`: the same against `POST /v1/webhook-endpoints`: a valid endpoint plus 90,000 unknown top-level fields (6).

`batches`: a `pro` tenant posts `--flood` keyed `POST /v1/classify/zelfstandigenwet/batch` at once, each with its
own `Idempotency-Key` and 1,000 items of 90 unknown fields (bodies just under 1 MiB) (4).

`pdfs`: a `pro` tenant asks `--flood` PDFs of its verdict's dossier (`GET /v1/classifications/{id}/dossier`,
`Accept: application/pdf`) at once, all within its burst (60).

`all`: every flood above, one after the other against one server, each with a fresh flooder and other tenant;
prints one table. Each flood has the attack's size unless `--flood N` sets it; `--scale 0.1` shrinks every size
(a smoke test).

`batch`: an in-process app (SQLite); two keyed `POST /v1/classify/zelfstandigenwet/batch` of 1,000 items (bodies
just under 1 MiB): each item with 90 unknown fields of random 6-character names, then each with 15 of random
55-character names. Prints the answers' sizes and the size of the idempotency record each left. Target: each
record at most 1 MB (1 kB an item).

    .venv/bin/python bench/dashboard_flood.py dossiers [--flood 40] [--probes 20]
    .venv/bin/python bench/dashboard_flood.py dossiers --cli /path/to/other/checkout/.venv/bin/compliance-api
    .venv/bin/python bench/dashboard_flood.py bodies --flood 6
    .venv/bin/python bench/dashboard_flood.py all [--scale 1] [--probes 20]
    BENCH_FLOOD_PG_DATABASE=NAME .venv/bin/python bench/dashboard_flood.py all --backend postgres --workers 2
    .venv/bin/python bench/dashboard_flood.py batch

`--cli` serves another checkout's code on the same terms (the figures "before" a change).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import secrets
import statistics
import string
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import harness
import httpx
import orjson
from sqlalchemy import func, select

from compliance_api.accounts import service as accounts
from compliance_api.accounts.models import Plan, UserKind
from compliance_api.app import create_app
from compliance_api.auth import service as auth_service
from compliance_api.config import Settings
from compliance_api.db import create_engine
from compliance_api.idempotency.models import IdempotencyRecord
from compliance_api.kit.environment import Environment
from compliance_api.migrate import upgrade

CSRF_FIELD = re.compile(r'name="csrf_token" value="([0-9a-f]{64})"')
PASSWORD = "correct horse battery"  # a throwaway account of the run
ENGAGEMENT = {"hourly_rate_eur": 80, "months_duration": 12, "days_per_week": 5, "other_clients_count": 0}
PG_DATABASE = os.environ.get("BENCH_FLOOD_PG_DATABASE", "compliance_bench_flood")
PG_URL = f"postgresql://postgres@127.0.0.1:5432/{PG_DATABASE}"
REDIS_URL = os.environ.get("BENCH_FLOOD_REDIS_URL", "redis://127.0.0.1:6379/13")
UNKNOWN_FIELDS = {f"k{n:05d}": 0 for n in range(90_000)}  # 990 kB as JSON
PROBE_INTERVAL = 0.05
"""Probes during a flood start at most 20 a second: a long flood's probes stay within the other tenant's `pro`
burst (1,200), so each is answered rather than refused."""
WEBHOOK = {"url": "https://hooks.example.com/flood", "enabled_events": ["*"]}


class OtherCli(harness.Server):
    """A server started from another checkout's command (`--cli`), with `--workers` processes."""

    cli: Path = harness.CLI
    workers: int = 1

    def argv(self) -> list[str]:
        argv = [str(self.cli), "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        return [*argv, "--workers", str(self.workers)] if self.workers > 1 else argv


@dataclass
class Stage:
    """What a flood needs: the server, the command's environment, a folder, and the other tenant's token."""

    server: OtherCli
    env: dict[str, str]
    workdir: Path
    other: str

    def token(self, plan: str) -> str:
        return harness.create_token(self.env, self.workdir, plan)

    def client(self) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        return httpx.AsyncClient(base_url=self.server.base_url, timeout=120, limits=limits)


@dataclass
class Outcome:
    """One flood: what it was, the other tenant's latencies alone and during it, and how the flood was answered."""

    flood: str
    alone: list[float]
    during: list[float]
    statuses: Counter[int]
    note: str = ""

    @property
    def met(self) -> bool:
        return max(self.during) < 1


async def _signed_up(http: httpx.AsyncClient, email: str) -> None:
    page = await http.get("/freelancer/sign-up")
    found = CSRF_FIELD.search(page.text)
    assert found is not None, "no CSRF field on the sign-up page"
    form = {"email": email, "password": PASSWORD, "kind": "freelancer", "csrf_token": found.group(1)}
    answer = await http.post("/freelancer/sign-up", data=form)
    assert answer.status_code == 303, answer.text


async def _probe(http: httpx.AsyncClient, token: str) -> float:
    started = time.perf_counter()
    answer = await http.get("/v1/classifications", headers={"Authorization": f"Bearer {token}"}, timeout=60)
    elapsed = time.perf_counter() - started
    if answer.status_code != 200:
        print(f"  probe answered {answer.status_code}")
    return elapsed


async def _probes(http: httpx.AsyncClient, token: str, count: int) -> list[float]:
    return [await _probe(http, token) for _ in range(count)]


async def _measured(
    stage: Stage, probes: int, flood: Callable[[], list[Awaitable[httpx.Response]]]
) -> tuple[list[float], list[float], list[httpx.Response]]:
    """The other tenant's probes alone, then from the flood's start until its last answer (at least `probes`)."""
    async with stage.client() as api:
        alone = await _probes(api, stage.other, probes)
        pending = [asyncio.ensure_future(request) for request in flood()]
        during: list[float] = []
        while len(during) < probes or not all(request.done() for request in pending):
            started = time.perf_counter()
            during.append(await _probe(api, stage.other))
            await asyncio.sleep(PROBE_INTERVAL - (time.perf_counter() - started))  # within the tenant's rate limit
        return alone, during, await asyncio.gather(*pending)


async def dossiers(stage: Stage, size: int, probes: int) -> Outcome:
    """One self-registered user downloads its verdict's dossier PDF from the dashboard `size` times at once."""
    email = f"flooder-{uuid.uuid4().hex[:12]}@example.com"
    async with stage.client() as browser:
        await _signed_up(browser, email)
        own = harness.cli(stage.env, stage.workdir, "tokens", "create", email).splitlines()[-1].strip()
        made = await browser.post(
            "/v1/classify/zelfstandigenwet", json={"engagement": ENGAGEMENT}, headers={"Authorization": f"Bearer {own}"}
        )
        link = f"/freelancer/classifications/live/{made.json()['id']}/dossier.pdf"
        alone, during, answers = await _measured(stage, probes, lambda: [browser.get(link) for _ in range(size)])
    flood = f"`dossiers`: {size} dashboard dossier PDF downloads at once by one self-registered user"
    return Outcome(flood, alone, during, Counter(answer.status_code for answer in answers))


async def _unknown_fields(
    stage: Stage, size: int, probes: int, path: str, body: bytes
) -> tuple[list[float], list[float], list[httpx.Response]]:
    """A `pro` tenant posts `body` to `path` `size` times at once, measured as `_measured` does."""
    headers = {"Authorization": f"Bearer {stage.token('pro')}", "Content-Type": "application/json"}
    async with stage.client() as http:
        return await _measured(
            stage, probes, lambda: [http.post(path, content=body, headers=headers) for _ in range(size)]
        )


def _largest(answers: list[httpx.Response]) -> str:
    return f"largest answer {max(len(answer.content) for answer in answers):,} bytes"


async def bodies(stage: Stage, size: int, probes: int) -> Outcome:
    """A `pro` tenant posts `size` bodies of 90,000 unknown `engagement` fields to the classify endpoint at once."""
    body = orjson.dumps({"engagement": UNKNOWN_FIELDS})
    alone, during, answers = await _unknown_fields(stage, size, probes, "/v1/classify/zelfstandigenwet", body)
    flood = f"`bodies`: {size} bodies of {len(body):,} B with 90,000 unknown `engagement` fields at once"
    return Outcome(flood, alone, during, Counter(a.status_code for a in answers), _largest(answers))


async def webhooks(stage: Stage, size: int, probes: int) -> Outcome:
    """A `pro` tenant posts `size` webhook endpoints with 90,000 unknown top-level fields each at once."""
    body = orjson.dumps({**WEBHOOK, **UNKNOWN_FIELDS})
    alone, during, answers = await _unknown_fields(stage, size, probes, "/v1/webhook-endpoints", body)
    flood = f"`webhooks`: {size} webhook endpoint creations of {len(body):,} B with 90,000 unknown fields at once"
    return Outcome(flood, alone, during, Counter(a.status_code for a in answers), _largest(answers))


def _bad_items(rng: random.Random, fields: int, length: int) -> bytes:
    """A batch body of 1,000 items, each with `fields` unknown fields of random `length`-character names."""
    alphabet = string.ascii_letters + string.digits
    engagements = ({"".join(rng.choices(alphabet, k=length)): 0 for _ in range(fields)} for _ in range(1000))
    return orjson.dumps({"items": [{"engagement": engagement} for engagement in engagements]})


async def batches(stage: Stage, size: int, probes: int) -> Outcome:
    """A `pro` tenant posts `size` keyed batches of 1,000 items with 90 unknown fields each at once."""
    body = _bad_items(random.Random(35), 90, 6)
    token = stage.token("pro")

    def headers(key: int) -> dict[str, str]:
        auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        return {**auth, "Idempotency-Key": f"flood-{key}"}

    path = "/v1/classify/zelfstandigenwet/batch"
    async with stage.client() as http:
        alone, during, answers = await _measured(
            stage, probes, lambda: [http.post(path, content=body, headers=headers(key)) for key in range(size)]
        )
    flood = f"`batches`: {size} keyed batches of 1,000 items with 90 unknown fields ({len(body):,} B) at once"
    return Outcome(flood, alone, during, Counter(a.status_code for a in answers), _largest(answers))


async def pdfs(stage: Stage, size: int, probes: int) -> Outcome:
    """A `pro` tenant asks its verdict's dossier PDF through the API `size` times at once (within its burst)."""
    auth = {"Authorization": f"Bearer {stage.token('pro')}"}
    async with stage.client() as http:
        made = await http.post("/v1/classify/zelfstandigenwet", json={"engagement": ENGAGEMENT}, headers=auth)
        link, headers = f"/v1/classifications/{made.json()['id']}/dossier", {**auth, "Accept": "application/pdf"}
        alone, during, answers = await _measured(
            stage, probes, lambda: [http.get(link, headers=headers) for _ in range(size)]
        )
    flood = f"`pdfs`: {size} dossier PDFs at once through the API by one `pro` account (within its burst)"
    return Outcome(flood, alone, during, Counter(answer.status_code for answer in answers))


Flood = Callable[[Stage, int, int], Awaitable[Outcome]]
FLOODS: dict[str, tuple[Flood, int]] = {
    "dossiers": (dossiers, 40),
    "bodies": (bodies, 6),
    "webhooks": (webhooks, 6),
    "batches": (batches, 4),
    "pdfs": (pdfs, 60),
}
"""Each flood and the size the attack used (`batches`: it said "several at once")."""


def backend_env(args: argparse.Namespace, workdir: Path) -> dict[str, str]:
    env = harness.base_env(workdir)  # SQLite under workdir/var, no Redis
    if args.backend == "postgres":
        # As in production: the webhook worker is its own process, not a task of the API server.
        env.update(DATABASE_URL=PG_URL, REDIS_URL=REDIS_URL, COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER="false")
    return env


async def floods(args: argparse.Namespace, workdir: Path) -> None:
    """The floods asked for, one after the other against one server; one table when there is more than one."""
    names = list(FLOODS) if args.what == "all" else [args.what]
    env = backend_env(args, workdir)
    if args.backend == "postgres":
        await harness.ensure_pg_database(PG_DATABASE)
    harness.cli(env, workdir, "migrate")
    server = OtherCli("flood", env, workdir, args.server_cpu)
    server.cli, server.workers = Path(args.cli) if args.cli else harness.CLI, args.workers
    server.start()
    loadavg = harness.load_average()
    outcomes = []
    for name in names:
        flood, size = FLOODS[name]
        scaled = args.flood or max(1, round(size * args.scale))
        stage = Stage(server, env, workdir, harness.create_token(env, workdir, "pro"))
        outcomes.append(await flood(stage, scaled, args.probes))
        _report(outcomes[-1])
    server.stop()
    print(f"server: {server.cli}, {args.backend}, {args.workers} worker(s); load average before: {loadavg}")
    if len(outcomes) > 1:
        print("\n".join(_table(outcomes)))


def _ms(figures: list[float]) -> str:
    return f"{max(figures) * 1000:,.0f} ms ({statistics.median(figures) * 1000:,.0f} ms)"


def _report(outcome: Outcome) -> None:
    note = f"; {outcome.note}" if outcome.note else ""
    print(f"flood: {outcome.flood}; answered {dict(sorted(outcome.statuses.items()))}{note}")
    for name, figures in (("alone", outcome.alone), ("during the flood", outcome.during)):
        print(
            f"other tenant's GET /v1/classifications {name} ({len(figures)} calls): "
            f"median {statistics.median(figures) * 1000:.0f} ms, worst {max(figures) * 1000:.0f} ms"
        )
    print(f"ratio of worst latencies (flood / alone): {max(outcome.during) / max(outcome.alone):.1f}")
    print(f"target, worst during the flood < 1 s: {'met' if outcome.met else 'NOT met'}", flush=True)


def _table(outcomes: list[Outcome]) -> list[str]:
    header = ("flood", "other tenant alone, worst (median)", "during the flood", "flood answered", "< 1 s")
    rows = [
        (
            outcome.flood,
            _ms(outcome.alone),
            _ms(outcome.during),
            ", ".join(f"{count} × {status}" for status, count in sorted(outcome.statuses.items())),
            "met" if outcome.met else "NOT met",
        )
        for outcome in outcomes
    ]
    return harness.table(header, "lrrll", rows)


async def batch(workdir: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{workdir}/bench.db", var_dir=workdir, secret_key=secrets.token_urlsafe(48)
    )
    migrated = create_engine(settings.resolved_database_url)
    await upgrade(migrated)
    await migrated.dispose()
    rng = random.Random(35)
    alphabet = string.ascii_letters + string.digits

    def items(fields: int, length: int) -> bytes:
        engagements = ({"".join(rng.choices(alphabet, k=length)): 0 for _ in range(fields)} for _ in range(1000))
        return orjson.dumps({"items": [{"engagement": engagement} for engagement in engagements]})

    shapes = {"90 unknown fields of 6 characters": items(90, 6), "15 unknown fields of 55 characters": items(15, 55)}
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        services = app.state.services
        async with services.sessionmaker.begin() as session:
            user = await accounts.create(session, email="bench@example.com", kind=UserKind.business, plan=Plan.pro)
            _, token = await auth_service.create(
                session, user=user, environment=Environment.live, name="bench", pepper=services.pepper
            )
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
            for key, (shape, body) in enumerate(shapes.items()):
                headers = {
                    "Authorization": f"Bearer {token}",
                    "Content-Type": "application/json",
                    "Idempotency-Key": f"bad-{key}",
                }
                answer = await http.post("/v1/classify/zelfstandigenwet/batch", content=body, headers=headers)
                async with services.sessionmaker() as session:
                    stored = await session.scalar(
                        select(func.length(IdempotencyRecord.response_body)).order_by(
                            IdempotencyRecord.created_at.desc()
                        )
                    )
                print(f"1,000 items of {shape}: body {len(body):,} bytes, answered {answer.status_code}")
                print(f"  answer {len(answer.content):,} bytes; idempotency record {stored or 0:,} bytes")
                print(f"  target, record <= 1,000,000 bytes: {'met' if (stored or 0) <= 1_000_000 else 'NOT met'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=(*FLOODS, "all", "batch"))
    parser.add_argument("--flood", type=int, default=None, help="the flood's size (default: the attack's)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the attack's sizes (0.1: a smoke test)")
    parser.add_argument("--probes", type=int, default=20)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--workers", type=int, default=1, help="server processes (more than one: --backend postgres)")
    parser.add_argument("--cli", help="serve another checkout's compliance-api (figures before a change)")
    parser.add_argument("--server-cpu", type=int, default=None)
    args = parser.parse_args()
    if args.workers > 1 and args.backend != "postgres":
        parser.error("--workers > 1 needs --backend postgres (Redis shares the rate limits)")
    harness.stop_on_signals()
    with tempfile.TemporaryDirectory(prefix="bench-flood-") as folder:
        try:
            if args.what == "batch":
                asyncio.run(batch(Path(folder)))
            else:
                asyncio.run(floods(args, Path(folder)))
        finally:
            harness.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
