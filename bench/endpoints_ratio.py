"""Every hot endpoint against `GET /v1/health`, in one server process and one run, on SQLite or PostgreSQL + Redis.

One server (`compliance-api serve`, ONE worker pinned to CPU 0, access log on, as `harness.py` starts it) serves,
from one seeded database:

* `GET /v1/health` (the gateway alone: the baseline, and its own req/s is reported: it must not get slower);
* `GET /v1/wtta/lookup?kvk=…` (a random number of a generated register on every request, from the in-memory copy);
* `GET /v1/rates/benchmark?sector=ict&region=NL` (synthetic production observations);
* `POST /v1/classify/zelfstandigenwet` and `POST /v1/classify/cross-border` (DE), each with its audit write;
* `GET /v1/passport/{share}/verify` (one share of a freelancer with three verifications; every view recorded);
* `GET /v1/passport` (the own passport of a freelancer with three verifications);
* `GET /v1/classifications` (the first page of an account holding `LIST_SEED` classifications).

The load is fixed: `wrk -t1 -c64` on CPU 1, 48 tokens per endpoint (48 `partner`-plan accounts of their own, one
token each, the next one on every request, so no bucket runs dry: with 12, `/v1/health` at 7,500 req/s ran them dry
by the third run and answered 429s; the token cache holds 48 entries per route),
a 2 s warm-up thrown away before each 6 s measurement. A run measures every endpoint once, health included, in an
order rotating between runs; `ratio = rps(endpoint) / rps(health)` of the same run. Each figure printed is the
median over `--runs` (5) runs: req/s, p50, p99 and the ratio; non-2xx answers are counted and flagged.

`--profile DIR` then samples the server with py-spy (`.venv/bin/pip install py-spy`) for `--profile-seconds` under
the same load, endpoint by endpoint, writes each endpoint's samples to `DIR/<backend>-<endpoint>.speedscope.json`
(open them in https://www.speedscope.app) and prints where the event loop's time goes: the top self-time frames of
the main thread, and the share of its samples inside the database driver, validation, serialisation, logging, hand-offs
to threads and the like (`KINDS`). Proportions, not absolute times: they hold on a loaded machine too.

    .venv/bin/python bench/endpoints_ratio.py --backend sqlite [--runs 5] [--results] [--profile DIR]
    .venv/bin/python bench/endpoints_ratio.py --backend postgres --duration 3 --warmup 1 --runs 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
import harness
from harness import Run
from wtta_generate import FIRST_KVK
from wtta_lookup_ratio import load_replica

from compliance_api.accounts import service as accounts
from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.auth import service as auth
from compliance_api.cli.common import transaction
from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import service as passport
from compliance_api.passport.catalogue import packaged_catalogue

PG_DATABASE = os.environ.get("BENCH_ENDPOINTS_PG_DATABASE", "compliance_bench_endpoints")
PG_URL = f"postgresql://postgres@127.0.0.1:5432/{PG_DATABASE}"
REDIS_URL = os.environ.get("BENCH_ENDPOINTS_REDIS_URL", "redis://127.0.0.1:6379/11")
TOKENS_PER_ENDPOINT = 48
REGISTER_ROWS = 100_000
LIST_SEED = 50  # classifications of each list account: more than one page
CHECKS = ("identity", "kvk_registration", "vat_number")
AS_OF = "2026-06-30"
ENGAGEMENT = {
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
DE_CRITERIA = {
    "subject_to_instructions": True,
    "integrated_in_client_organisation": False,
    "fixed_working_hours": False,
    "works_at_client_premises": True,
    "paid_by_time": True,
    "single_client_long_term": False,
}


@dataclass(frozen=True)
class Endpoint:
    name: str  # short, used for files and table rows
    label: str  # method and route, as the tables name it
    lua_path: str  # a Lua expression giving the request path (may draw a random number)
    kind: UserKind = UserKind.business
    body: dict[str, Any] | None = None


HEALTH = Endpoint("health", "GET /v1/health", '"/v1/health"')
ENDPOINTS = (
    HEALTH,
    Endpoint(
        "wtta_lookup",
        "GET /v1/wtta/lookup",
        f'string.format("/v1/wtta/lookup?kvk=%08d", {FIRST_KVK} + math.random(0, {REGISTER_ROWS} - 1) * 7)',
    ),
    Endpoint("rates_benchmark", "GET /v1/rates/benchmark", '"/v1/rates/benchmark?sector=ict&region=NL"'),
    Endpoint(
        "classify_nl",
        "POST /v1/classify/zelfstandigenwet",
        '"/v1/classify/zelfstandigenwet"',
        body={"engagement": ENGAGEMENT},
    ),
    Endpoint(
        "classify_de",
        "POST /v1/classify/cross-border (DE)",
        '"/v1/classify/cross-border"',
        body={"country": "DE", "criteria": DE_CRITERIA},
    ),
    Endpoint("passport_verify", "GET /v1/passport/{share}/verify", '"/v1/passport/" .. share .. "/verify"'),
    Endpoint("passport_own", "GET /v1/passport", '"/v1/passport"', kind=UserKind.freelancer),
    Endpoint("classification_list", "GET /v1/classifications", '"/v1/classifications"'),
)

LUA = """
math.randomseed(42)
local tokens = {%(tokens)s}
local share = %(share)s
local body = %(body)s
local headers = {}
local next_token = 0
request = function()
  next_token = next_token %% #tokens + 1
  headers["Authorization"] = "Bearer " .. tokens[next_token]
  if body then headers["Content-Type"] = "application/json" end
  return wrk.format(%(method)s, %(path)s, headers, body)
end
"""


def lua_script(endpoint: Endpoint, tokens: list[str], share: str) -> str:
    """wrk Lua: the endpoint's request with the next of its tokens on every request, plus the shared report."""
    body = json.dumps(json.dumps(endpoint.body, separators=(",", ":"))) if endpoint.body else "nil"
    fields = {
        "tokens": ", ".join(json.dumps(t) for t in tokens),  # a JSON string literal is a Lua one here (ASCII)
        "share": json.dumps(share),
        "body": body,
        "method": '"POST"' if endpoint.body else '"GET"',
        "path": endpoint.lua_path,
    }
    return LUA % fields + harness.WRK_REPORT


# --------------------------------------------------------------------------------------------- setup


def backend_env(backend: str, workdir: Path) -> dict[str, str]:
    env = harness.base_env(workdir)  # SQLite under workdir/var, no Redis
    if backend == "postgres":
        # As in production: the webhook worker is its own process, not a task of the API server.
        env.update(DATABASE_URL=PG_URL, REDIS_URL=REDIS_URL, COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER="false")
    return env


@dataclass
class Seeded:
    tokens: dict[str, list[str]]  # endpoint name -> its tokens
    share: str  # the share-token verifiers read


async def seed_accounts(settings: Settings, endpoints: Sequence[Endpoint] = ENDPOINTS) -> Seeded:
    """Per endpoint `TOKENS_PER_ENDPOINT` `partner` accounts with one token each (freelancers with three
    verifications for the own passport), and a freelancer's share for the verifiers; in one transaction, through the
    services."""
    pepper, now, catalogue = settings.secret_key_bytes(), utcnow(), packaged_catalogue()
    run_id = uuid.uuid4().hex[:8]

    async def verified_freelancer(session: Any, email: str) -> User:
        user = await accounts.create(session, email=email, kind=UserKind.freelancer, plan=Plan.partner)
        for check in CHECKS:
            await passport.record_verification(
                session,
                user,
                Environment.live,
                catalogue,
                check=check,
                verified_on=now.date(),
                expires_on=None,
                evidence_ref="bench",
                now=now,
            )
        return user

    tokens: dict[str, list[str]] = {}
    async with transaction(settings) as session:
        for endpoint in endpoints:
            tokens[endpoint.name] = []
            for i in range(TOKENS_PER_ENDPOINT):
                email = f"bench-{endpoint.name.replace('_', '-')}-{i}-{run_id}@example.com"
                if endpoint.kind is UserKind.freelancer:
                    user = await verified_freelancer(session, email)
                else:
                    user = await accounts.create(session, email=email, kind=endpoint.kind, plan=Plan.partner)
                _, secret = await auth.create(
                    session, user=user, environment=Environment.live, name="bench", pepper=pepper
                )
                tokens[endpoint.name].append(secret)
        shared = await verified_freelancer(session, f"bench-shared-{run_id}@example.com")
        created = await passport.create_share_for(
            session, shared, Environment.live, ttl_days=30, pepper=pepper, now=now
        )
    return Seeded(tokens, created.token)


def seed_lists(base_url: str, tokens: list[str]) -> None:
    """`LIST_SEED` Dutch classifications for each list account, in one batch call each (through the API)."""
    items = [{"engagement": {**ENGAGEMENT, "hourly_rate_eur": 60 + i}} for i in range(LIST_SEED)]
    for token in tokens:
        answer = httpx.post(
            base_url + "/v1/classify/zelfstandigenwet/batch",
            json={"items": items},
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        answer.raise_for_status()


def seed_register(env: dict[str, str], workdir: Path) -> None:
    register = workdir / "register.csv"
    generate = [sys.executable, str(Path(__file__).parent / "wtta_generate.py"), str(register)]
    subprocess.run([*generate, "--rows", str(REGISTER_ROWS)], check=True, capture_output=True, timeout=300)
    done = subprocess.run(
        [str(harness.CLI), "wtta", "import", str(register), "--quiet", "--json"],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"wtta import failed ({done.returncode}):\n{done.stderr}")


def settings_for(env: dict[str, str]) -> Settings:
    return Settings(
        DATABASE_URL=env.get("DATABASE_URL", ""),
        COMPLIANCE_SECRET_KEY=env["COMPLIANCE_SECRET_KEY"],
        COMPLIANCE_VAR_DIR=env["COMPLIANCE_VAR_DIR"],
    )


# --------------------------------------------------------------------------------------------- measuring


@dataclass
class Result:
    backend: str
    runs: dict[str, list[Run]] = field(default_factory=dict)  # endpoint name -> one Run per bench run
    profiles: dict[str, Profile] = field(default_factory=dict)

    def ratios(self, name: str) -> list[float]:
        return [r.rps / h.rps for r, h in zip(self.runs[name], self.runs[HEALTH.name], strict=True)]

    def median(self, name: str, attribute: str) -> float:
        values: list[float] = [getattr(run, attribute) for run in self.runs[name]]
        return statistics.median(values)


def bench_backend(backend: str, args: argparse.Namespace) -> Result:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-endpoints-{backend}-"))
    server = None
    try:
        env = backend_env(backend, workdir)
        if backend == "postgres":
            asyncio.run(harness.ensure_pg_database(PG_DATABASE))
        harness.cli(env, workdir, "migrate")
        print(f"[{backend}] seeding: {REGISTER_ROWS} register rows, rate observations, accounts", flush=True)
        seed_register(env, workdir)
        harness.cli(env, workdir, "rates", "generate", "--env", "live", "--allow-synthetic", "--as-of", AS_OF)
        seeded = asyncio.run(seed_accounts(settings_for(env)))
        server = harness.Server(backend, env, workdir, args.server_cpu)
        server.start()
        print(f"[{backend}] server pid {server.pid} on port {server.port}, files in {workdir}", flush=True)
        seed_lists(server.base_url, seeded.tokens["classification_list"])
        load_replica(server, seeded.tokens["wtta_lookup"][0], REGISTER_ROWS)
        scripts = {endpoint.name: workdir / f"{endpoint.name}.lua" for endpoint in ENDPOINTS}
        for endpoint in ENDPOINTS:
            scripts[endpoint.name].write_text(lua_script(endpoint, seeded.tokens[endpoint.name], seeded.share))
        result = measure_all(server, scripts, args)
        if args.profile:
            for endpoint in ENDPOINTS:
                result.profiles[endpoint.name] = profile(server, endpoint, scripts[endpoint.name], args)
        return result
    finally:
        if server is not None:
            server.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def measure_all(server: harness.Server, scripts: dict[str, Path], args: argparse.Namespace) -> Result:
    """`--runs` runs, each measuring every endpoint once after its warm-up, the order rotating between runs."""

    def measure(endpoint: Endpoint, seconds: float) -> Run:
        url = server.base_url + "/"  # the path comes from the Lua script
        script = scripts[endpoint.name]
        return harness.measured(
            server, url, seconds, cpu=args.client_cpu, connections=args.connections, token=None, script=script
        )

    result = Result(args.backend, {endpoint.name: [] for endpoint in ENDPOINTS})
    for run_no in range(args.runs):
        shift = run_no % len(ENDPOINTS)
        for endpoint in ENDPOINTS[shift:] + ENDPOINTS[:shift]:
            if args.warmup > 0:
                measure(endpoint, args.warmup)
            run = measure(endpoint, args.duration)
            result.runs[endpoint.name].append(run)
            print(f"[{args.backend}] run {run_no + 1} {endpoint.label:36} {run.figures(p50_width=7)}", flush=True)
    return result


# --------------------------------------------------------------------------------------------- profiling

# What runs synchronously on the event loop: a main-thread sample counts for every kind whose pattern one of its
# frames matches (so the shares overlap). The patterns match the `function (file:line)` names `_short` makes.
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("database (SQLAlchemy and driver, on the loop)", ("(sqlalchemy/", "(aiosqlite/", "(asyncpg/")),
    ("hand-off to a thread (aiosqlite's queue, executor submit)", ("(aiosqlite/core.py:158)", "(concurrent/futures/")),
    ("group commit (audit, view and event writes)", ("(compliance_api/kit/group_commit.py",)),
    ("embedded webhook worker", ("(compliance_api/webhooks/worker.py",)),
    ("token lookup in the database", ("resolve (compliance_api/auth/service.py",)),
    ("rate limiter", ("(compliance_api/ratelimit/",)),
    ("Redis client", ("(redis/",)),
    ("access log (structlog, a write per request)", ("(structlog/",)),
    ("request log buffer", ("(compliance_api/requestlog/",)),
    ("pydantic (validation, serialisation)", ("(pydantic/", "(pydantic_core/")),
    ("zstd (stored verdicts)", ("(compliance_api/classify/compression.py",)),
    ("random bytes (request id, uuid4)", ("randbytes (", "uuid4 (")),
    ("answer written to the socket (uvicorn send)", ("RequestResponseCycle.send (uvicorn/",)),
)
# Self time by where the innermost frame lives.
PLACES: tuple[tuple[str, str], ...] = (
    ("compliance_api", "(compliance_api/"),
    ("SQLAlchemy", "(sqlalchemy/"),
    ("aiosqlite", "(aiosqlite/"),
    ("asyncpg", "(asyncpg/"),
    ("redis", "(redis/"),
    ("pydantic", "(pydantic"),
    ("structlog", "(structlog/"),
    ("FastAPI", "(fastapi/"),
    ("Starlette", "(starlette/"),
    ("uvicorn", "(uvicorn/"),
    ("the loop itself, in C (uvloop, httptools)", "asyncio/runners.py"),
    ("the loop itself, in C (uvloop, httptools)", "MainThread"),
)


@dataclass
class Profile:
    samples: int  # main-thread samples counted (the event loop busy; py-spy leaves idle ones out), stalls collapsed
    stalled: int  # main-thread samples dropped as the repeats of a stall (see `read_profile`)
    other_threads: int  # samples of other threads (aiosqlite's connection threads, the SQLite writer, executors)
    self_frames: list[tuple[str, int]]  # top self-time frames of the main thread
    kinds: list[tuple[str, int]]  # samples per kind (KINDS), main thread; they overlap
    places: list[tuple[str, int]]  # self samples per place (PLACES), main thread
    app_frames: list[tuple[str, int]]  # top inclusive frames inside compliance_api, main thread
    path: Path


def profile(server: harness.Server, endpoint: Endpoint, script: Path, args: argparse.Namespace) -> Profile:
    """py-spy samples the server (non-blocking: the server is not paused) while wrk runs the endpoint's load."""
    out = args.profile / f"{args.backend}-{endpoint.name}.speedscope.json"
    argv = [str(harness.BIN / "py-spy"), "record", "--pid", str(server.pid), "--duration", str(args.profile_seconds)]
    argv += ["--rate", str(PROFILE_RATE), "--format", "speedscope", "--threads", "--nonblocking", "-o", str(out)]
    spy = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = args.profile_seconds + 1
    url = server.base_url + "/"
    harness.wrk(url, seconds, cpu=args.client_cpu, connections=args.connections, token=None, script=script)
    _, errors = spy.communicate(timeout=args.profile_seconds + 60)
    if spy.returncode != 0:
        raise RuntimeError(f"py-spy failed ({spy.returncode}): {errors}")
    found = read_profile(out)
    print(
        f"[{args.backend}] profiled {endpoint.label}: {found.samples} loop samples ({found.stalled} stall repeats "
        f"dropped) -> {out}",
        flush=True,
    )
    return found


PROFILE_RATE = 200  # samples a second: 5 ms apart, several requests' worth of work at these rates


def read_profile(path: Path) -> Profile:
    """Sum py-spy's speedscope samples: self time, kinds, places and app frames of the main thread (the event loop).

    py-spy counts a thread that is runnable but waiting for a CPU as busy, so on a loaded machine a descheduled
    server repeats one stack sample after sample. Each run of identical consecutive main-thread stacks therefore
    counts once (`stalled` says how many repeats were dropped): the server handles a request in about a millisecond,
    so two samples 5 ms apart on the very same line of the very same stack mean it did not run in between."""
    raw = json.loads(path.read_text())
    names = [_short(f"{f['name']} ({f['file']}:{f['line']})") for f in raw["shared"]["frames"]]
    self_time: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    places: Counter[str] = Counter()
    app: Counter[str] = Counter()
    main = stalled = other = 0
    for thread in raw["profiles"]:
        if not thread["name"].endswith('"MainThread"'):
            other += len(thread["samples"])
            continue
        previous: list[int] | None = None
        for sample in thread["samples"]:  # frame indices, outermost first
            if sample == previous:
                stalled += 1
                continue
            previous = sample
            frames = [names[i] for i in sample] or ["(the loop itself, in C)"]
            main += 1
            self_time[frames[-1]] += 1
            places[_place(frames[-1])] += 1
            for kind, patterns in KINDS:
                if any(pattern in frame for frame in frames for pattern in patterns):
                    kinds[kind] += 1
            for frame in {f for f in frames if "(compliance_api/" in f and "(compliance_api/cli/" not in f}:
                app[frame] += 1
    self_frames, app_frames = self_time.most_common(8), app.most_common(10)
    return Profile(main, stalled, other, self_frames, kinds.most_common(), places.most_common(), app_frames, path)


def _place(frame: str) -> str:
    return next((place for place, pattern in PLACES if pattern in frame), "Python standard library, other")


def _short(frame: str) -> str:
    """`name (/long/path/site-packages/pkg/mod.py:12)` -> `name (pkg/mod.py:12)`."""
    name, _, where = frame.partition(" (")
    for marker in ("site-packages/", "/lib/python3.11/", "compliance_api/"):
        if marker in where:
            head = "compliance_api/" if marker == "compliance_api/" else ""
            where = head + where.split(marker, 1)[1]
            break
    return f"{name} ({where}"


# --------------------------------------------------------------------------------------------- report


def _range(values: list[float]) -> str:
    return f"{min(values):.2f}–{max(values):.2f}"


def table_lines(result: Result) -> list[str]:
    rows = []
    for endpoint in ENDPOINTS:
        runs = result.runs[endpoint.name]
        ratios = result.ratios(endpoint.name)
        rows.append(
            [
                f"`{endpoint.label}`",
                f"{result.median(endpoint.name, 'rps'):.0f}",
                f"{result.median(endpoint.name, 'p50_ms'):.1f} ms",
                f"{result.median(endpoint.name, 'p99_ms'):.1f} ms",
                f"{statistics.median(ratios):.2f}" if endpoint is not HEALTH else "1",
                _range(ratios) if endpoint is not HEALTH else "",
                sum(run.non2xx + run.socket_errors for run in runs),
                f"{statistics.median(run.server_cpu for run in runs):.0%}",
            ]
        )
    header = ("endpoint", "req/s", "p50", "p99", "ratio", "ratio per run", "non-2xx + errors", "server cpu")
    return harness.table(header, "lrrrrlrr", rows)


def kinds_table(result: Result) -> list[str]:
    """Share of each endpoint's event-loop samples by kind (KINDS; a sample counts for each kind on its stack)."""
    profiled = [endpoint for endpoint in ENDPOINTS if endpoint.name in result.profiles]
    rows = []
    for kind, _ in KINDS:
        cells = []
        for endpoint in profiled:
            found = result.profiles[endpoint.name]
            cells.append(f"{dict(found.kinds).get(kind, 0) / max(found.samples, 1):.0%}")
        rows.append([kind, *cells])
    header = ["on the event loop", *(f"`{endpoint.name}`" for endpoint in profiled)]
    return harness.table(header, "l" + "r" * len(profiled), rows)


def profile_lines(result: Result) -> list[str]:
    out = ["", *kinds_table(result)]
    for endpoint in ENDPOINTS:
        found = result.profiles.get(endpoint.name)
        if found is None or not found.samples:
            continue
        out += [
            "",
            f"`{endpoint.label}` ({found.samples} event-loop samples, {found.stalled} stall repeats dropped, "
            f"{found.other_threads} samples in other threads; "
            f"`{found.path.name}`):",
            "",
            "- on the loop, inclusive (overlapping): "
            + "; ".join(f"{name} {n / found.samples:.0%}" for name, n in found.kinds),
            "- self time by place: " + "; ".join(f"{name} {n / found.samples:.0%}" for name, n in found.places),
            "- top self time: " + "; ".join(f"`{frame}` {n / found.samples:.0%}" for frame, n in found.self_frames),
            "- inside the app (inclusive): "
            + "; ".join(f"`{frame}` {n / found.samples:.0%}" for frame, n in found.app_frames),
        ]
    return out


def report_profiles(directory: Path, backend: str) -> int:
    """Where the time goes, read again from the samples of an earlier `--profile` run (no server, no load)."""
    result = Result(backend)
    for endpoint in ENDPOINTS:
        path = directory / f"{backend}-{endpoint.name}.speedscope.json"
        if path.exists():
            result.profiles[endpoint.name] = read_profile(path)
    if not result.profiles:
        print(f"error: no {backend}-*.speedscope.json in {directory}", file=sys.stderr)
        return 2
    print("\n".join(profile_lines(result)))
    return 0


def machine_and_command(info: dict[str, str], command: str) -> list[str]:
    """The Markdown lines naming the machine, its load and the command of a run (shared with the floor)."""
    return [
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), Linux {info['kernel']}, Python {info['python']}, "
        f"{info['wrk']}; load average before the run {info['loadavg']}.",
        "",
        f"Command: `{command}`",
    ]


def markdown(result: Result, args: argparse.Namespace, info: dict[str, str], command: str) -> str:
    out = [
        f"## Hot endpoints against `/v1/health` (`bench/endpoints_ratio.py`, {result.backend}), {time.strftime('%F')}",
        "",
        *machine_and_command(info, command),
        "",
        f"Load: one server worker on CPU {args.server_cpu}, `wrk -t1 -c{args.connections}` on CPU {args.client_cpu}, "
        f"{TOKENS_PER_ENDPOINT} partner tokens per endpoint, {args.warmup:g} s warm-up then {args.duration:g} s per "
        f"endpoint; every figure is the median of {args.runs} runs (order rotating), the ratio is "
        "rps(endpoint) / rps(/v1/health) of the same run.",
        "",
        *table_lines(result),
    ]
    if result.profiles:
        out += ["", f"### Where the time goes ({result.backend}, py-spy, {args.profile_seconds} s per endpoint)"]
        out += profile_lines(result)
    return "\n".join(out) + "\n"


def add_load_options(parser: argparse.ArgumentParser, measured: str) -> None:
    """The fixed load's options (backend, runs, durations, wrk connections, CPUs, Markdown), shared with the floor."""
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--runs", type=int, default=5, help="Runs; each figure is their median (5).")
    parser.add_argument("--duration", type=float, default=6, help=f"Seconds per {measured} per run (6).")
    parser.add_argument("--warmup", type=float, default=2, help="Warm-up seconds before each measurement (2).")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections (64).")
    parser.add_argument("--server-cpu", type=int, default=0, help="CPU for the server (0).")
    parser.add_argument("--client-cpu", type=int, default=1, help="CPU for wrk (1).")
    parser.add_argument("--markdown", type=Path, help="Also write the results as Markdown to this file.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_load_options(parser, "endpoint")
    parser.add_argument("--results", action="store_true", help="Also append the Markdown to bench/RESULTS.md.")
    parser.add_argument("--profile", type=Path, help="Then profile each endpoint with py-spy; stacks go here.")
    parser.add_argument("--profile-seconds", type=int, default=10, help="Seconds of sampling per endpoint (10).")
    parser.add_argument(
        "--report", type=Path, help="Only print where the time goes from the samples a `--profile DIR` run left here."
    )
    parser.add_argument("--keep", action="store_true", help="Keep the temporary directory (server log, SQLite).")
    args = parser.parse_args()

    if args.report:
        return report_profiles(args.report, args.backend)
    missing = harness.preflight(args, ["wrk", "taskset"], "wrk util-linux")
    if missing is not None:
        return missing
    if args.profile:
        if not (harness.BIN / "py-spy").exists():
            print("error: py-spy not found (.venv/bin/pip install py-spy)", file=sys.stderr)
            return 2
        args.profile.mkdir(parents=True, exist_ok=True)

    harness.stop_on_signals()
    loadavg = harness.load_average()
    print(f"load average {loadavg} (other work on these CPUs moves req/s; compare the ratios)", flush=True)
    started = time.monotonic()
    try:
        result = bench_backend(args.backend, args)
    finally:
        harness.stop_all()

    command = " ".join([".venv/bin/python", "bench/endpoints_ratio.py", *sys.argv[1:]])
    report = markdown(result, args, harness.machine(loadavg), command)
    print()
    print(report)
    print(f"(took {time.monotonic() - started:.0f} s)")
    if args.markdown:
        args.markdown.write_text(report)
        print(f"wrote {args.markdown}")
    if args.results:
        with open(Path(__file__).parent / "RESULTS.md", "a", encoding="utf-8") as results:
            results.write("\n" + report)
        print("appended to bench/RESULTS.md")
    flawed = any(run.non2xx or run.socket_errors for runs in result.runs.values() for run in runs)
    return 1 if flawed else 0


if __name__ == "__main__":
    sys.exit(main())
