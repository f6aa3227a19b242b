"""Floods that used to hold every tenant up: another tenant's `GET /v1/classifications` latency while one user floods
the service, and the size of what a keyed batch of bad items stores.

`dossiers`: one server (`compliance-api serve`, one worker, SQLite, the default pool of 10 connections). A
self-registered user signs up in the dashboard and classifies one engagement; another tenant has an API token. The
other tenant asks `GET /v1/classifications` `--probes` times, one after the other, first alone (the baseline), then
while the user downloads the verdict's dossier PDF from the dashboard `--flood` times at once. Prints the other
tenant's median and worst latency in each phase, their ratio, and the status counts of the flood. Target: worst
latency during the flood under 1 s.

`bodies`: the same server; the other tenant's probes alone, then while a `pro` tenant posts `--flood` bodies of
just under 1 MiB to `POST /v1/classify/zelfstandigenwet` at once, each with 90,000 unknown `engagement` fields.
Prints the latencies as above and the largest answer. Target: worst latency during the flood under 1 s.

`batch`: an in-process app (SQLite); two keyed `POST /v1/classify/zelfstandigenwet/batch` of 1,000 items (bodies
just under 1 MiB): each item with 90 unknown fields of random 6-character names, then each with 15 of random
55-character names. Prints the answers' sizes and the size of the idempotency record each left. Target: each
record at most 1 MB (1 kB an item).

    .venv/bin/python bench/dashboard_flood.py dossiers [--flood 40] [--probes 20]
    .venv/bin/python bench/dashboard_flood.py dossiers --cli /path/to/other/checkout/.venv/bin/compliance-api
    .venv/bin/python bench/dashboard_flood.py bodies --flood 6
    .venv/bin/python bench/dashboard_flood.py batch

`--cli` serves another checkout's code on the same terms (the figures "before" a change).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import secrets
import statistics
import string
import sys
import tempfile
import time
from collections import Counter
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


class OtherCli(harness.Server):
    """A server started from another checkout's command (`--cli`)."""

    cli: Path = harness.CLI

    def argv(self) -> list[str]:
        return [str(self.cli), "serve", "--host", "127.0.0.1", "--port", str(self.port)]


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


async def dossiers(args: argparse.Namespace, workdir: Path) -> None:
    env = harness.base_env(workdir)
    cli = Path(args.cli) if args.cli else harness.CLI
    harness.cli(env, workdir, "migrate")
    other = harness.create_token(env, workdir, "free")
    server = OtherCli("flood", env, workdir, args.server_cpu)
    server.cli = cli
    server.start()
    email = "flooder@example.com"
    async with httpx.AsyncClient(base_url=server.base_url, timeout=120) as browser:
        await _signed_up(browser, email)
        own = harness.cli(env, workdir, "tokens", "create", email).splitlines()[-1].strip()
        made = await browser.post(
            "/v1/classify/zelfstandigenwet",
            json={"engagement": ENGAGEMENT},
            headers={"Authorization": f"Bearer {own}"},
        )
        link = f"/freelancer/classifications/live/{made.json()['id']}/dossier.pdf"
        async with httpx.AsyncClient(base_url=server.base_url, timeout=120) as api:
            alone = await _probes(api, other, args.probes)
            flood = [asyncio.create_task(browser.get(link)) for _ in range(args.flood)]
            during = await _probes(api, other, args.probes)
            statuses = Counter(answer.status_code for answer in await asyncio.gather(*flood))
    server.stop()
    print(f"server: {cli}")
    print(f"flood: {args.flood} dashboard dossier downloads at once by one user; answered {dict(statuses)}")
    _latencies(alone, during)


async def bodies(args: argparse.Namespace, workdir: Path) -> None:
    env = harness.base_env(workdir)
    cli = Path(args.cli) if args.cli else harness.CLI
    harness.cli(env, workdir, "migrate")
    other, flooder = harness.create_token(env, workdir, "free"), harness.create_token(env, workdir, "pro")
    server = OtherCli("bodies", env, workdir, args.server_cpu)
    server.cli = cli
    server.start()
    body = orjson.dumps({"engagement": {f"k{n:05d}": 0 for n in range(90_000)}})  # 990 kB
    headers = {"Authorization": f"Bearer {flooder}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=server.base_url, timeout=120) as http:
        alone = await _probes(http, other, args.probes)
        flood = [
            asyncio.create_task(http.post("/v1/classify/zelfstandigenwet", content=body, headers=headers))
            for _ in range(args.flood)
        ]
        during = await _probes(http, other, args.probes)
        answers = await asyncio.gather(*flood)
    server.stop()
    sizes = sorted(len(answer.content) for answer in answers)
    print(f"server: {cli}")
    print(
        f"flood: {args.flood} bodies of {len(body):,} bytes with {body.count(b':') - 1:,} unknown fields at once; "
        f"answered {dict(Counter(answer.status_code for answer in answers))}, {sizes[-1]:,} bytes at most"
    )
    _latencies(alone, during)


def _latencies(alone: list[float], during: list[float]) -> None:
    for name, figures in (("alone", alone), ("during the flood", during)):
        print(
            f"other tenant's GET /v1/classifications {name}: median {statistics.median(figures) * 1000:.0f} ms, "
            f"worst {max(figures) * 1000:.0f} ms"
        )
    print(f"ratio of worst latencies (flood / alone): {max(during) / max(alone):.1f}")
    print(f"target, worst during the flood < 1 s: {'met' if max(during) < 1 else 'NOT met'}")


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
    parser.add_argument("what", choices=("dossiers", "bodies", "batch"))
    parser.add_argument("--flood", type=int, default=40)
    parser.add_argument("--probes", type=int, default=20)
    parser.add_argument("--cli", help="serve another checkout's compliance-api (figures before a change)")
    parser.add_argument("--server-cpu", type=int, default=None)
    args = parser.parse_args()
    harness.stop_on_signals()
    with tempfile.TemporaryDirectory(prefix="bench-flood-") as folder:
        try:
            if args.what == "dossiers":
                asyncio.run(dossiers(args, Path(folder)))
            elif args.what == "bodies":
                asyncio.run(bodies(args, Path(folder)))
            else:
                asyncio.run(batch(Path(folder)))
        finally:
            harness.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
