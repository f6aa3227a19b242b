"""Scale-out load test: two API workers, one webhook worker, PostgreSQL and Redis.

Setup: database `compliance_bench_scale` (created and migrated), Redis db 11 (flushed first, so every bucket starts
full), `compliance-api serve --workers 2` and `compliance-api worker`; three production users at mixed tiers
(free, pro, partner) holding 20 tokens between them (6, 7, 7). The load: one `wrk` per user, each request
`GET /v1/health` with the next of that user's tokens (all tokens of a user share the user's bucket), for
`--duration` seconds; meanwhile a fourth, unlimited account posts Dutch classifications, whose
`classification.created` events the webhook worker delivers to a local receiver.

Checks, printed as a table (and as Markdown with `--markdown FILE`):

* rate limits hold across the two workers: each user's 200s are within 1 % of the GCRA bucket model,
  `min(sent, burst + rate x elapsed)`;
* no 5xx anywhere (every status is 200 or, for the limited users, 429);
* p50/p99 latency per user, as wrk measured it;
* every classification's event reached the receiver (no event lost under load).

    .venv/bin/python bench/scaleout.py [--duration 30] [--connections 16] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
import harness

PG_DATABASE = os.environ.get("BENCH_SCALE_PG_DATABASE", "compliance_bench_scale")
PG_URL = f"postgresql://postgres@127.0.0.1:5432/{PG_DATABASE}"
REDIS_URL = os.environ.get("BENCH_SCALE_REDIS_URL", "redis://127.0.0.1:6379/11")
USERS = (("free", 6, 120, 1.0), ("pro", 7, 1200, 10.0), ("partner", 7, 6000, 50.0))  # plan, tokens, burst, per s
TOLERANCE = 0.01
CLASSIFY_BODY = {"engagement": {"hourly_rate_eur": 95, "months_duration": 12, "days_per_week": 3}}

# Each request takes the next token; statuses are counted in the thread's globals and reported by done().
ROTATING_TOKENS = """
local tokens = {%s}
local next_token = 0
s200, s429, s5xx, sother = 0, 0, 0, 0
request = function()
  next_token = next_token %% #tokens + 1
  return wrk.format("GET", "/v1/health", {["Authorization"] = "Bearer " .. tokens[next_token]})
end
response = function(status, headers, body)
  if status == 200 then s200 = s200 + 1
  elseif status == 429 then s429 = s429 + 1
  elseif status >= 500 then s5xx = s5xx + 1
  else sother = sother + 1 end
end
local threads = {}
setup = function(thread) table.insert(threads, thread) end
done = function(summary, latency, requests)
  local c = {s200 = 0, s429 = 0, s5xx = 0, sother = 0}
  for _, t in ipairs(threads) do
    for k, _ in pairs(c) do c[k] = c[k] + t:get(k) end
  end
  io.write(string.format(
    'BENCH_JSON {"requests":%%d,"duration_us":%%d,"p50_us":%%d,"p99_us":%%d,"max_us":%%d,'
    .. '"s200":%%d,"s429":%%d,"s5xx":%%d,"sother":%%d,"socket_errors":%%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    c.s200, c.s429, c.s5xx, c.sother,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
"""


@dataclass
class UserResult:
    plan: str
    tokens: int
    sent: int
    allowed: int
    limited: int
    server_errors: int
    other: int
    socket_errors: int
    elapsed_s: float
    expected: float
    p50_ms: float
    p99_ms: float
    max_ms: float

    @property
    def within_tolerance(self) -> bool:
        return abs(self.allowed - self.expected) <= max(1.0, self.expected * TOLERANCE)


class Receiver:
    """A local webhook receiver: records each delivery's `webhook-id` and event body."""

    def __init__(self) -> None:
        self.received: dict[str, dict[str, object]] = {}
        lock = threading.Lock()
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with lock:
                    received[self.headers.get("webhook-id", "")] = json.loads(body)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def classification_ids(self) -> set[str]:
        return {str(body["data"]["classification_id"]) for body in list(self.received.values())}  # type: ignore[index]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"


def prepare(workdir: Path) -> dict[str, str]:
    asyncio.run(harness.ensure_pg_database(PG_DATABASE))
    subprocess.run(["redis-cli", "-u", REDIS_URL, "FLUSHDB"], check=True, capture_output=True)
    env = harness.base_env(workdir)
    env.update(
        DATABASE_URL=PG_URL,
        REDIS_URL=REDIS_URL,
        COMPLIANCE_ACCESS_LOG="false",
        COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS="true",
        COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER="false",
        **harness.NO_SANDBOX_PORT,
    )
    (workdir / "var").mkdir(parents=True, exist_ok=True)
    harness.cli(env, workdir, "migrate")
    return env


def user_tokens(env: dict[str, str], workdir: Path, plan: str, count: int) -> tuple[str, list[str]]:
    """A new user of the plan and `count` production tokens of theirs; returns (e-mail, tokens)."""
    email = f"scale-{plan}-{os.getpid()}-{time.time_ns()}@example.com"
    harness.cli(env, workdir, "users", "create", email, "--plan", plan)
    return email, [harness.cli(env, workdir, "tokens", "create", email).splitlines()[-1].strip() for _ in range(count)]


def start(env: dict[str, str], workdir: Path, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
    log = open(workdir / f"{name}.log", "wb")
    proc = subprocess.Popen(
        [str(harness.CLI), *argv], env=env, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    return harness.started(proc)


def wait_live(base_url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(base_url + "/livez", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError("the API did not come up within 60 s")


def run_wrk(base_url: str, tokens: list[str], seconds: int, connections: int, script: Path) -> subprocess.Popen[str]:
    script.write_text(ROTATING_TOKENS % ", ".join(json.dumps(t) for t in tokens))
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s", "-s", str(script)]
    return subprocess.Popen([*argv, base_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def classify_stream(base_url: str, token: str, stop: threading.Event, ids: list[str], statuses: list[int]) -> None:
    """Post classifications one after another until stopped (the events the webhook worker must deliver)."""
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        while not stop.is_set():
            response = client.post("/v1/classify/zelfstandigenwet", json=CLASSIFY_BODY)
            statuses.append(response.status_code)
            if response.status_code == 200:
                ids.append(response.json()["id"])


def result_of(plan: str, tokens: int, burst: int, per_second: float, output: str) -> UserResult:
    line = next((ln for ln in output.splitlines() if ln.startswith("BENCH_JSON ")), None)
    if line is None:
        raise RuntimeError(f"no report from wrk:\n{output}")
    raw = json.loads(line.removeprefix("BENCH_JSON "))
    elapsed = raw["duration_us"] / 1e6
    sent = raw["s200"] + raw["s429"] + raw["s5xx"] + raw["sother"]
    return UserResult(
        plan=plan,
        tokens=tokens,
        sent=sent,
        allowed=raw["s200"],
        limited=raw["s429"],
        server_errors=raw["s5xx"],
        other=raw["sother"],
        socket_errors=raw["socket_errors"],
        elapsed_s=elapsed,
        expected=min(sent, burst + per_second * elapsed),
        p50_ms=raw["p50_us"] / 1000,
        p99_ms=raw["p99_us"] / 1000,
        max_ms=raw["max_us"] / 1000,
    )


def report(results: list[UserResult], events: tuple[int, int, list[int]], args: argparse.Namespace) -> str:
    sent_events, delivered, statuses = events
    lines = [
        f"Command: `.venv/bin/python bench/scaleout.py --duration {args.duration} --connections {args.connections}`",
        "",
        f"Load average before the run: {args.loadavg}",
        "",
        "| user plan | tokens | requests | 200 | 429 | 5xx | other | model (burst + rate x elapsed) | within 1 % "
        "| p50 | p99 | max |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.plan} | {r.tokens} | {r.sent} | {r.allowed} | {r.limited} | {r.server_errors} | {r.other} "
            f"| {r.expected:.1f} ({r.elapsed_s:.2f} s) | {'yes' if r.within_tolerance else '**no**'} "
            f"| {r.p50_ms:.1f} ms | {r.p99_ms:.1f} ms | {r.max_ms:.1f} ms |"
        )
    bad_classify = sum(1 for s in statuses if s != 200)
    lines += [
        "",
        f"Webhooks: {sent_events} classifications answered 200 ({bad_classify} other answers); their "
        f"`classification.created` events delivered to the receiver: {delivered} ({sent_events - delivered} missing).",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=30)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    args.loadavg = harness.load_average()
    workdir = Path(tempfile.mkdtemp(prefix="scaleout-"))
    try:
        env = prepare(workdir)
        tokens = {plan: user_tokens(env, workdir, plan, count)[1] for plan, count, _, _ in USERS}
        owner, (internal,) = user_tokens(env, workdir, "internal", 1)
        receiver = Receiver()
        harness.cli(env, workdir, "webhooks", "add", owner, receiver.url, "--event", "classification.created")
        port = harness.free_port()
        base_url = f"http://127.0.0.1:{port}"
        start(env, workdir, "api", ["serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "2"])
        start(env, workdir, "worker", ["worker"])
        wait_live(base_url)
        stop = threading.Event()
        ids: list[str] = []
        statuses: list[int] = []
        feeder = threading.Thread(target=classify_stream, args=(base_url, internal, stop, ids, statuses))
        feeder.start()
        runs = {
            plan: run_wrk(base_url, tokens[plan], args.duration, args.connections, workdir / f"{plan}.lua")
            for plan, _, _, _ in USERS
        }
        outputs = {plan: proc.communicate(timeout=args.duration + 120)[0] for plan, proc in runs.items()}
        stop.set()
        feeder.join()
        results = [result_of(plan, n, burst, rate, outputs[plan]) for plan, n, burst, rate in USERS]
        wanted = set(ids)
        deadline = time.monotonic() + 60
        while not wanted <= receiver.classification_ids() and time.monotonic() < deadline:
            time.sleep(0.5)
        got = receiver.classification_ids()
        text = report(results, (len(wanted), len(wanted & got), statuses), args)
        print(text)
        if args.markdown:
            args.markdown.write_text(text + "\n")
        ok = all(r.within_tolerance and r.server_errors == 0 and r.other == 0 for r in results) and wanted <= got
        print("all checks passed" if ok else "SOME CHECKS FAILED")
        return 0 if ok else 1
    finally:
        harness.stop_all()


if __name__ == "__main__":
    sys.exit(main())
