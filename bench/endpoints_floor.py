"""The floor of the WTTA lookup, the rate benchmark and the passport verification: each route reduced step by step,
against `GET /v1/health`, in one server process and one run, on SQLite or PostgreSQL + Redis.

Where `endpoints_ratio.py` shows a route below its target, this says how much of the gap any route on the same path
pays whatever it does, and what each layer of the real route adds. The server is this script in `--serve PORT` mode:
the app as `serve` builds it, plus, for the run only (never in the shipped app), one route per step:

* `bytes`: the route's path outside `/v1` (`/bench/…`), answering the real route's body, precomputed (the gateway
  does not run: no token, no rate limit, no request log; the request context, access log and metrics do);
* `auth`: `/v1/bench/…`, the gateway's token authentication (cache hit), no rate limit, no request log;
* `limit`: + the rate limit (the gateway as it is; like `/v1/health`, not in the request log);
* `logged`: + the request log (what every real hot route pays before it does its own work);
* `read`: + the domain's read: the in-memory register copy (lookup), the benchmark cache (benchmark), the share
  read (verify, its view not recorded), still answering the precomputed body;
* `recorded` (verify): + the view and its event written through the group commit;
* `signed` (verify): + the body built from what was read (the signed summary from its cache);
* `real`: the real route (for the lookup, `read` + its body: nothing else; for the benchmark, + the query checked,
  the publication rule and the cached body, serialised when read; for verify, + FastAPI's path parameter).

The bench routes sit in two mounts put first in the routing table, so a real route pays two failed matches more
than in the shipped app (about 3 µs, the same for `/v1/health`), and a step route pays no tries through the app's.
A step that leaves something out of the gateway does so in `SteppedGateway` (`auth`) or by being listed among the
unlogged routes (`auth`, `limit`), as `/v1/health` is.

The load and setup are `endpoints_ratio.py`'s: the same seeded database, `wrk -t1 -c64` on CPU 1 against one
worker on CPU 0, 12 partner tokens per step (accounts of each step's own: steps sharing a route's accounts drained
their buckets and measured 429s), a warm-up thrown away before each measurement, every target measured once per run
in an order rotating between runs, each figure the median over `--runs`; `ratio = rps / rps(health)` of the same
run, `p99 / health` likewise.

    .venv/bin/python bench/endpoints_floor.py --backend sqlite [--runs 5] [--markdown FILE]
    BENCH_ENDPOINTS_PG_DATABASE=… BENCH_ENDPOINTS_REDIS_URL=… \\
      .venv/bin/python bench/endpoints_floor.py --backend postgres
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import httpx
import uvicorn
from fastapi import APIRouter, Request, Response
from starlette.middleware import Middleware
from starlette.routing import Mount
from starlette.types import Receive, Scope, Send

sys.path.insert(0, str(Path(__file__).parent))

import harness
from endpoints_ratio import (
    AS_OF,
    ENDPOINTS,
    HEALTH,
    PG_DATABASE,
    REGISTER_ROWS,
    Endpoint,
    Result,
    add_load_options,
    backend_env,
    lua_script,
    machine_and_command,
    seed_accounts,
    seed_register,
    settings_for,
)
from passport_floor import NoRecord
from wtta_generate import FIRST_KVK
from wtta_lookup_ratio import load_replica

from compliance_api import middleware
from compliance_api.app import create_app
from compliance_api.auth.dependencies import caller_of, peppers_of
from compliance_api.auth.gateway import ApiGateway, AuthFailure
from compliance_api.config import Settings
from compliance_api.errors import ApiError
from compliance_api.kit.clock import utcnow
from compliance_api.kit.group_commit import GroupCommit, group_commit_of
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.passport import service as passport
from compliance_api.passport import views as passport_views
from compliance_api.passport.catalogue import packaged_catalogue
from compliance_api.passport.dependencies import hot_path_of, signing_keys_of
from compliance_api.rates.cache import Entry
from compliance_api.rates.endpoints import _lookup as benchmark_entry
from compliance_api.requestlog.buffer import UNLOGGED_ROUTES
from compliance_api.server import uvicorn_options
from compliance_api.wtta.dependencies import reader_of
from compliance_api.wtta.endpoints import KVK_QUERY_PARAMETER, _kvk_of

ROUTES = ("lookup", "benchmark", "verify")
REAL_PATHS = {
    "lookup": "/v1/wtta/lookup",
    "benchmark": "/v1/rates/benchmark",
    "verify": "/v1/passport/{share}/verify",
}
TOKENS_OF = {"lookup": "wtta_lookup", "benchmark": "rates_benchmark", "verify": "passport_verify"}
QUERIES = {  # a Lua expression appended to the path (the lookup draws a number of the register on every request)
    "lookup": f'string.format("?kvk=%08d", {FIRST_KVK} + math.random(0, {REGISTER_ROWS} - 1) * 7)',
    "benchmark": '"?sector=ict&region=NL"',
    "verify": '""',
}
STEPS = {  # per route, its steps in order, each with what it adds to the one before
    "lookup": (
        ("bytes", "precomputed body, no gateway"),
        ("auth", "+ token authentication"),
        ("limit", "+ rate limit"),
        ("logged", "+ request log"),
        ("read", "+ `kvk` and the in-memory register copy"),
        ("real", "+ the admission body = the real route"),
    ),
    "benchmark": (
        ("bytes", "precomputed body, no gateway"),
        ("auth", "+ token authentication"),
        ("limit", "+ rate limit"),
        ("logged", "+ request log"),
        ("read", "+ the benchmark cache"),
        ("real", "+ the query checked, the publication rule and the cached body = the real route"),
    ),
    "verify": (
        ("bytes", "precomputed body, no gateway"),
        ("auth", "+ token authentication"),
        ("limit", "+ rate limit"),
        ("logged", "+ request log"),
        ("read", "+ the share read (view not recorded)"),
        ("recorded", "+ view and event through the group commit"),
        ("signed", "+ the signed body (its cache)"),
        ("real", "+ FastAPI path parameter = the real route"),
    ),
}
BENCHMARK_QUERY = {
    "parameters": [{"name": name, "in": "query", "schema": {"type": "string"}} for name in ("sector", "region")]
}
LOOKUP_QUERY = {"parameters": [KVK_QUERY_PARAMETER]}


def step_path(route: str, step: str) -> str:
    """The request path of a step (`{share}` stands for the share-token)."""
    if step == "real":
        return REAL_PATHS[route]
    inner = "/verify/{share}" if route == "verify" else f"/{route}"
    return f"{'/bench' if step == 'bytes' else '/v1/bench'}{inner}/{step}"


def target_name(route: str, step: str) -> str:
    return f"{route}_{step}"


# --------------------------------------------------------------------------------------------- the bench server


class SteppedGateway(ApiGateway):
    """The app's gateway, except on the `auth` steps: the token authenticated, the rate limit left out."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/v1/bench/") and scope["path"].endswith("/auth"):
            try:
                cached = await self._authenticate(scope)
            except AuthFailure as failure:
                await self.services.problems.send(send, scope, failure.code, detail=failure.detail)
                return
            scope["state"]["caller"] = cached.caller
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def bench_routers(fixed: dict[str, bytes]) -> tuple[APIRouter, APIRouter]:
    """(the `bytes` steps, outside `/v1`; the other steps, under `/v1/bench`), each route's body taken from `fixed`."""
    no_record = cast(GroupCommit, NoRecord())  # duck-typed: verify_share only calls `insert`
    outside = APIRouter(route_class=StrictQueryRoute, include_in_schema=False)
    inside = APIRouter(route_class=StrictQueryRoute, include_in_schema=False)

    def answer(route: str) -> Response:
        return Response(fixed[route], media_type="application/json")

    def precomputed(route: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return answer(route)

        return endpoint

    @outside.put("/fixed/{route}")
    async def put_fixed(route: str, request: Request) -> Response:
        fixed[route] = await request.body()
        return Response(status_code=204)

    extra = {"lookup": LOOKUP_QUERY, "benchmark": BENCHMARK_QUERY, "verify": None}
    for route in ROUTES:
        inner = "/verify/{token}" if route == "verify" else f"/{route}"
        outside.get(f"{inner}/bytes", openapi_extra=extra[route])(precomputed(route))
        for step in ("auth", "limit", "logged"):
            inside.get(f"{inner}/{step}", openapi_extra=extra[route])(precomputed(route))

    @inside.get("/lookup/read", openapi_extra=LOOKUP_QUERY)
    async def lookup_read(request: Request) -> Response:
        caller, kvk, reader = caller_of(request), _kvk_of(request), reader_of(request)
        if reader is None or await reader.lookup(caller.environment, kvk) is None:
            raise ApiError("not_in_cache", kvk)
        return answer("lookup")

    async def benchmark_read(request: Request) -> Entry:
        caller, query = caller_of(request), request.query_params
        return await benchmark_entry(request, (caller.environment, query["sector"], query["region"]))

    @inside.get("/benchmark/read", openapi_extra=BENCHMARK_QUERY)
    async def benchmark_cached(request: Request) -> Response:
        await benchmark_read(request)
        return answer("benchmark")

    async def verified(request: Request, audit: GroupCommit) -> passport.VerifiedShare:
        token, caller, (pepper, previous) = request.path_params["token"], caller_of(request), peppers_of(request)
        reader = hot_path_of(request).reader
        return await passport.verify_share(
            reader, audit, caller, token, pepper=pepper, previous_pepper=previous, now=utcnow()
        )

    @inside.get("/verify/{token}/read")
    async def verify_read(request: Request) -> Response:
        await verified(request, no_record)
        return answer("verify")

    @inside.get("/verify/{token}/recorded")
    async def verify_recorded(request: Request) -> Response:
        await verified(request, group_commit_of(request))
        return answer("verify")

    @inside.get("/verify/{token}/signed")
    async def verify_signed(request: Request) -> Response:
        share = await verified(request, group_commit_of(request))
        keys, summaries = signing_keys_of(request), hot_path_of(request).summaries
        body = passport_views.signed_summary_body(share, packaged_catalogue(), keys, summaries)
        return Response(body, media_type="application/json")

    return outside, inside


def serve(port: int) -> None:
    """The app as `serve` builds it, with the steps' routes first and the stepped gateway (this process only)."""
    os.environ.setdefault("COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER", "true")  # as `serve` has it
    settings = Settings()
    app = create_app(settings)
    fixed: dict[str, bytes] = {}
    outside, inside = bench_routers(fixed)
    app.router.routes[0:0] = [Mount("/bench", routes=outside.routes), Mount("/v1/bench", routes=inside.routes)]
    unlogged = {f"/{route}/{step}" for route in ("lookup", "benchmark") for step in ("auth", "limit")}
    unlogged |= {f"/verify/{{token}}/{step}" for step in ("auth", "limit")}
    # RequestContext reads the module's set on every request: re-bound in this process only.
    middleware.UNLOGGED_ROUTES = UNLOGGED_ROUTES | unlogged  # type: ignore[attr-defined]
    app.user_middleware = [
        Middleware(SteppedGateway, services=app.state.services) if cast(object, entry.cls) is ApiGateway else entry
        for entry in app.user_middleware
    ]
    options = uvicorn_options(settings, host="127.0.0.1", port=port, workers=1) | {"factory": False}
    uvicorn.run(app, **options)


class FloorServer(harness.Server):
    """This script in `--serve` mode, started and stopped like the other benchmarks' servers."""

    def argv(self) -> list[str]:
        return [sys.executable, __file__, "--serve", str(self.port)]


# --------------------------------------------------------------------------------------------- measuring


@dataclass(frozen=True)
class Target:
    route: str  # "" for health
    step: str
    adds: str
    endpoint: Endpoint  # what `lua_script` needs: name, label and Lua path


def targets() -> list[Target]:
    found = [Target("", "health", "the baseline", HEALTH)]
    for route in ROUTES:
        for step, adds in STEPS[route]:
            path = step_path(route, step)
            lua = '"' + path.replace("{share}", '" .. share .. "') + '" .. ' + QUERIES[route]
            endpoint = Endpoint(target_name(route, step), f"{route} {step}", lua)
            found.append(Target(route, step, adds, endpoint))
    return found


def fix_bodies(server: harness.Server, tokens: dict[str, list[str]], share: str) -> None:
    """Each real route's body, answered once, handed to the server as the steps' precomputed body."""
    queries = {"lookup": f"?kvk={FIRST_KVK}", "benchmark": "?sector=ict&region=NL", "verify": ""}
    for route in ROUTES:
        url = server.base_url + REAL_PATHS[route].format(share=share) + queries[route]
        token = tokens[TOKENS_OF[route]][0]
        answer = httpx.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        answer.raise_for_status()
        httpx.put(f"{server.base_url}/bench/fixed/{route}", content=answer.content, timeout=30).raise_for_status()


def bench_backend(args: argparse.Namespace) -> tuple[list[Target], Result]:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-floor-{args.backend}-"))
    try:
        env = backend_env(args.backend, workdir)
        if args.backend == "postgres":
            asyncio.run(harness.ensure_pg_database(PG_DATABASE))
        harness.cli(env, workdir, "migrate")
        print(f"[{args.backend}] seeding: {REGISTER_ROWS} register rows, rate observations, accounts", flush=True)
        seed_register(env, workdir)
        harness.cli(env, workdir, "rates", "generate", "--env", "live", "--allow-synthetic", "--as-of", AS_OF)
        found = targets()
        # accounts of their own per step: steps sharing a route's accounts ran their buckets dry (429s)
        per_step = {endpoint.name: endpoint for endpoint in (*ENDPOINTS, *(target.endpoint for target in found))}
        seeded = asyncio.run(seed_accounts(settings_for(env), tuple(per_step.values())))
        server = FloorServer("floor", env, workdir, args.server_cpu)
        server.start()
        print(f"[{args.backend}] server pid {server.pid} on port {server.port}, files in {workdir}", flush=True)
        load_replica(server, seeded.tokens["wtta_lookup"][0], REGISTER_ROWS)
        fix_bodies(server, seeded.tokens, seeded.share)
        scripts = {}
        for target in found:
            tokens = seeded.tokens[target.endpoint.name]
            scripts[target.endpoint.name] = workdir / f"{target.endpoint.name}.lua"
            scripts[target.endpoint.name].write_text(lua_script(target.endpoint, tokens, seeded.share))
        return found, measure_all(server, found, scripts, args)
    finally:
        harness.stop_all()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def measure_all(
    server: harness.Server, found: list[Target], scripts: dict[str, Path], args: argparse.Namespace
) -> Result:
    """`--runs` runs, each measuring every target once after its warm-up, the order rotating between runs."""

    def measure(target: Target, seconds: float) -> harness.Run:
        script = scripts[target.endpoint.name]
        url = server.base_url + "/"  # the path comes from the Lua script
        return harness.measured(
            server, url, seconds, cpu=args.client_cpu, connections=args.connections, token=None, script=script
        )

    result = Result(args.backend, {target.endpoint.name: [] for target in found})
    for run_no in range(args.runs):
        shift = run_no % len(found)
        for target in found[shift:] + found[:shift]:
            if args.warmup > 0:
                measure(target, args.warmup)
            run = measure(target, args.duration)
            result.runs[target.endpoint.name].append(run)
            print(
                f"[{args.backend}] run {run_no + 1} {target.endpoint.label:18} {run.figures(p50_width=7)}", flush=True
            )
    return result


# --------------------------------------------------------------------------------------------- report


def table_lines(found: list[Target], result: Result) -> list[str]:
    health_p99 = result.median(HEALTH.name, "p99_ms")
    rows = []
    for target in found:
        name = target.endpoint.name
        ratios = result.ratios(name)
        p99 = result.median(name, "p99_ms")
        rows.append(
            [
                f"`{target.route or 'health'}`",
                f"`{target.step}`",
                target.adds,
                f"{result.median(name, 'rps'):.0f}",
                f"{result.median(name, 'p50_ms'):.1f} ms",
                f"{p99:.1f} ms",
                f"{statistics.median(ratios):.2f}",
                f"{min(ratios):.2f}–{max(ratios):.2f}",
                f"{p99 / health_p99:.1f}",
                sum(run.non2xx + run.socket_errors for run in result.runs[name]),
            ]
        )
    header = ("route", "step", "adds", "req/s", "p50", "p99", "ratio", "ratio per run", "p99 / health's", "non-2xx")
    return harness.table(header, "lllrrrrlrr", rows)


def markdown(found: list[Target], result: Result, args: argparse.Namespace, info: dict[str, str], command: str) -> str:
    out = [
        f"## Floors of the hot reads against `/v1/health` (`bench/endpoints_floor.py`, {result.backend}), "
        f"{time.strftime('%F')}",
        "",
        *machine_and_command(info, command),
        "",
        f"Load: one server worker on CPU {args.server_cpu}, `wrk -t1 -c{args.connections}` on CPU {args.client_cpu}, "
        f"12 partner tokens per step, {args.warmup:g} s warm-up then {args.duration:g} s per target; every figure "
        f"is the median of {args.runs} runs (order rotating); ratio and p99 / health's are of the same run.",
        "",
        *table_lines(found, result),
    ]
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    add_load_options(parser, "target")
    parser.add_argument("--keep", action="store_true", help="Keep the temporary directory (server log, SQLite).")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0
    missing = harness.preflight(args, ["wrk", "taskset"], "wrk util-linux")
    if missing is not None:
        return missing
    harness.stop_on_signals()
    loadavg = harness.load_average()
    print(f"load average {loadavg} (other work on these CPUs moves req/s; compare the ratios)", flush=True)
    started = time.monotonic()
    found, result = bench_backend(args)
    command = " ".join([".venv/bin/python", "bench/endpoints_floor.py", *sys.argv[1:]])
    report = markdown(found, result, args, harness.machine(loadavg), command)
    print()
    print(report)
    print(f"(took {time.monotonic() - started:.0f} s)")
    if args.markdown:
        args.markdown.write_text(report)
        print(f"wrote {args.markdown}")
    flawed = any(run.non2xx or run.socket_errors for runs in result.runs.values() for run in runs)
    return 1 if flawed else 0


if __name__ == "__main__":
    sys.exit(main())
