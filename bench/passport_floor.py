"""How far below `/v1/health` the passport routes can get: the real routes against reductions of them, in one
server process and run (the reductions are added to the app for the run only):

* `verify-unrecorded`: the verify route's read, status check and cached signed body, the view and its event built
  but not handed to the group commit (what verify would cost if recording were free);
* `verify-floor`: a route declared like verify (the `token` path parameter) answering a fixed body of the same size
  (what any authenticated route with this path and answer costs, whatever it does);
* `own-floor`: a route declared like `/v1/passport` answering the own passport's body, fixed.

    .venv/bin/python bench/passport_floor.py [--backend embedded|postgres] [--duration 8] [--rounds 2]

The server is started by this script (`--serve PORT`), pinned to CPU 0 with uvicorn's options from `serve`; wrk
runs on CPU 1 with 64 connections. The ratios are paired (the same run), robust to other load on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import cast

import httpx
import uvicorn
from fastapi import APIRouter, Request, Response

sys.path.insert(0, str(Path(__file__).parent))

import harness
from passport_ratio import PG_DATABASE, backend_env, setup

from compliance_api.app import create_app
from compliance_api.auth.dependencies import caller_of
from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.passport import service, views
from compliance_api.passport.catalogue import packaged_catalogue
from compliance_api.passport.dependencies import hot_path_of
from compliance_api.server import uvicorn_options

ROUTES = {
    "health": "/v1/health",
    "own": "/v1/passport",
    "own-floor": "/v1/bench/own-floor",
    "verify": "/v1/passport/{token}/verify",
    "verify-unrecorded": "/v1/bench/{token}/verify-unrecorded",
    "verify-floor": "/v1/bench/{token}/verify-floor",
}
TOKENS = {"health": "verifier", "own": "own", "own-floor": "own"}


class NoRecord:
    """Stands in for the group commit: the rows are dropped at once (the reduction records nothing)."""

    async def insert(self, *rows: object) -> None:
        return None


def serve(port: int) -> None:
    """The app as `serve` builds it, plus the reductions (this process only)."""
    settings = Settings()
    app = create_app(settings)
    services = app.state.services
    no_record = cast(GroupCommit, NoRecord())  # duck-typed: verify only calls `insert`
    router = APIRouter(prefix="/v1/bench")
    fixed = {"own": os.environb[b"BENCH_OWN_BODY"], "verify": os.environb[b"BENCH_VERIFY_BODY"]}

    @router.get("/own-floor")
    async def own_floor(request: Request) -> Response:
        caller_of(request)
        return Response(fixed["own"], media_type="application/json")

    @router.get("/{token}/verify-unrecorded")
    async def verify_unrecorded(token: str, request: Request) -> Response:
        hot = hot_path_of(request)
        caller, pepper, previous_pepper = caller_of(request), services.pepper, services.previous_pepper
        verified = await service.verify_share(
            hot.reader, no_record, caller, token, pepper=pepper, previous_pepper=previous_pepper, now=utcnow()
        )
        body = views.signed_summary_body(verified, packaged_catalogue(), services.signing_keys, hot.summaries)
        return Response(body, media_type="application/json")

    @router.get("/{token}/verify-floor")
    async def verify_floor(token: str, request: Request) -> Response:
        caller_of(request)
        return Response(fixed["verify"], media_type="application/json")

    app.include_router(router)
    options = uvicorn_options(settings, host="127.0.0.1", port=port, workers=1) | {"factory": False}
    uvicorn.run(app, **options)


class FloorServer(harness.Server):
    """This script in `--serve` mode, started and stopped like the other benchmarks' servers."""

    def argv(self) -> list[str]:
        return [sys.executable, __file__, "--serve", str(self.port)]


def bodies(env: dict[str, str], workdir: Path, own: str, verifier: str, share: str) -> dict[str, str]:
    """The real bodies of both routes, from a server started for the purpose (the floors answer them fixed)."""
    server = harness.Server("bodies", env, workdir, None)
    server.start()
    try:
        own_body = httpx.get(server.base_url + "/v1/passport", headers={"Authorization": f"Bearer {own}"}).text
        verify_url = server.base_url + f"/v1/passport/{share}/verify"
        verify_body = httpx.get(verify_url, headers={"Authorization": f"Bearer {verifier}"}).text
    finally:
        server.stop()
    return {"BENCH_OWN_BODY": own_body, "BENCH_VERIFY_BODY": verify_body}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--backend", choices=("embedded", "postgres"), default="embedded")
    parser.add_argument("--duration", type=float, default=8)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    workdir = Path(tempfile.mkdtemp(prefix="passport-floor-"))
    if args.backend == "postgres":
        asyncio.run(harness.ensure_pg_database(PG_DATABASE))
    env = backend_env(args.backend, workdir)
    own, verifier, share, _ = setup(args.backend, env, workdir)
    env |= bodies(env, workdir, own, verifier, share)
    tokens = {"own": own, "verifier": verifier}
    script = workdir / "get.lua"
    script.write_text(harness.WRK_REPORT)
    server = FloorServer("floor", env, workdir, 0)
    server.start()
    rps: dict[str, list[float]] = {name: [] for name in ROUTES}
    try:
        for round_no in range(args.rounds):
            order = list(ROUTES) if round_no % 2 == 0 else list(reversed(ROUTES))
            for name in order:
                url = server.base_url + ROUTES[name].format(token=share)
                token = tokens[TOKENS.get(name, "verifier")]
                harness.wrk(url, args.warmup, cpu=1, connections=64, token=token, script=script)
                run = harness.wrk(url, args.duration, cpu=1, connections=64, token=token, script=script)
                if run.non2xx:
                    raise SystemExit(f"{name}: {run.non2xx} non-2xx answers")
                rps[name].append(run.rps)
                print(
                    f"round {round_no + 1} {name:16} rps={run.rps:8.1f} p50={run.p50_ms:7.2f} ms"
                    f" p99={run.p99_ms:7.2f} ms",
                    flush=True,
                )
    finally:
        harness.stop_all()
    health = sum(rps["health"]) / args.rounds
    for name in ROUTES:
        if name == "health":
            continue
        mean = sum(rps[name]) / args.rounds
        rounds = ", ".join(f"{r / h:.2f}" for r, h in zip(rps[name], rps["health"], strict=True))
        print(f"{args.backend}: {name:16} {mean:8.1f} rps / health {health:8.1f} rps = {mean / health:.2f} ({rounds})")


if __name__ == "__main__":
    main()
