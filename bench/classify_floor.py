"""How far below `/v1/health` the Dutch classify endpoint must stay: the framework floor of a POST that does its work.

The target is `rps(classify) / rps(health) >= 0.6`. This script measures, in one server process and run, the
real endpoint against two reductions of it that are added to the app for the run only:

* `score`: the same route declaration and body validation, scoring, the verdict body and its serialisation; no
  audit write (what classify would cost if the verdict were not kept);
* `floor`: the same route declaration and body validation, answering a verdict of the same size computed once at
  start (what any FastAPI POST route with this body and response costs, whatever it does).

If `floor` is already near or below 0.6, no work on the audit write or the scoring can reach the target while the
endpoint stays a FastAPI route returning the explainable verdict.

    .venv/bin/python bench/classify_floor.py [--backend embedded|postgres] [--duration 8] [--rounds 2]

The server is started by this script (`--serve PORT`), pinned to CPU 0 with uvicorn's options from `serve`; wrk
runs on CPU 1 with 64 connections.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import sys
import tempfile
import uuid
from pathlib import Path

import orjson
import uvicorn
from fastapi import APIRouter, Request, Response

sys.path.insert(0, str(Path(__file__).parent))

import harness
from classify_ratio import PG_DATABASE, backend_env, post_script

from compliance_api.app import create_app
from compliance_api.classify import views
from compliance_api.classify.dutch import assess_engagement
from compliance_api.classify.schemas import ZelfstandigenwetRequest
from compliance_api.classify.verdict_body import ZWVerdictBody
from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.schemas import json_response
from compliance_api.server import uvicorn_options

ROUTES = {
    "health": "/v1/health",
    "classify": "/v1/classify/zelfstandigenwet",
    "score": "/v1/bench/score",
    "floor": "/v1/bench/floor",
}


def serve(port: int) -> None:
    """The app as `serve` builds it, plus the two reductions (this process only; FastAPI reads the routes'
    annotations from this module's globals, hence the imports at the top)."""
    settings = Settings()
    app = create_app(settings)
    rulesets = app.state.services.rulesets
    router = APIRouter(prefix="/v1/bench")

    def verdict(body: ZelfstandigenwetRequest, now: dt.datetime) -> ZWVerdictBody:
        assessment = assess_engagement(rulesets.dutch, body.engagement.model_dump(), body.as_of or now.date())
        return views.dutch_verdict(
            assessment, rulesets.dutch, rulesets.phrases, id=uuid.uuid4(), created_at=now, tracked=body, livemode=True
        )

    sample = ZelfstandigenwetRequest.model_validate({"engagement": {"hourly_rate_eur": 95, "months_duration": 12}})
    fixed = orjson.dumps(verdict(sample, utcnow()))

    @router.post("/score")
    async def score(body: ZelfstandigenwetRequest, request: Request) -> Response:
        return json_response(verdict(body, utcnow()))

    @router.post("/floor")
    async def floor(body: ZelfstandigenwetRequest, request: Request) -> Response:
        return Response(fixed, media_type="application/json")

    app.include_router(router)
    options = uvicorn_options(settings, host="127.0.0.1", port=port, workers=1) | {"factory": False}
    uvicorn.run(app, **options)


class FloorServer(harness.Server):
    """This script in `--serve` mode, started and stopped like the other benchmarks' servers."""

    def argv(self) -> list[str]:
        return [sys.executable, __file__, "--serve", str(self.port)]


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
    workdir = Path(tempfile.mkdtemp(prefix="classify-floor-"))
    if args.backend == "postgres":
        asyncio.run(harness.ensure_pg_database(PG_DATABASE))
    env = backend_env(args.backend, workdir)
    harness.cli(env, workdir, "migrate")
    token = harness.create_token(env, workdir, "internal")
    get_script, post = workdir / "get.lua", workdir / "post.lua"
    get_script.write_text(harness.WRK_REPORT)
    post.write_text(post_script())
    env = {**env, "COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER": env.get("COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER", "true")}
    server = FloorServer("floor", env, workdir, 0)
    server.start()
    rps: dict[str, list[float]] = {name: [] for name in ROUTES}
    try:
        for round_no in range(args.rounds):
            order = list(ROUTES) if round_no % 2 == 0 else list(reversed(ROUTES))
            for name in order:
                url, script = server.base_url + ROUTES[name], get_script if name == "health" else post
                harness.wrk(url, args.warmup, cpu=1, connections=64, token=token, script=script)
                run = harness.wrk(url, args.duration, cpu=1, connections=64, token=token, script=script)
                if run.non2xx:
                    raise SystemExit(f"{name}: {run.non2xx} non-2xx answers")
                rps[name].append(run.rps)
                print(f"round {round_no + 1} {name:8} rps={run.rps:8.1f} p50={run.p50_ms:6.2f} ms", flush=True)
    finally:
        harness.stop_all()
    health = sum(rps["health"]) / args.rounds
    for name in ("classify", "score", "floor"):
        mean = sum(rps[name]) / args.rounds
        rounds = ", ".join(f"{r / h:.2f}" for r, h in zip(rps[name], rps["health"], strict=True))
        print(f"{args.backend}: {name:8} {mean:8.1f} rps / health {health:8.1f} rps = {mean / health:.2f} ({rounds})")


if __name__ == "__main__":
    main()
