"""How much the authenticated, rate-limited path costs: `GET /v1/health` (full) against `GET /livez` (bare).

For each backend, one server process with ONE worker pinned to CPU 0, `wrk` pinned to CPU 1:

* embedded: SQLite in a temporary directory, no REDIS_URL (in-process limiter); target ratio >= 0.8
* redis:    PostgreSQL (database `compliance_bench`, created and migrated if missing) and Redis db 14; target >= 0.6

`ratio = rps(/v1/health) / rps(/livez)`, both measured in the same server process, in alternating order, each
after a short warm-up. The access log stays on (one JSON line per request, as in production) and goes to a file.
The same server is then checked for rate-limit exactness with a `free` token (burst 120, 60/min) against the
GCRA bucket model: allowed = burst + 1 per elapsed second.

    .venv/bin/python bench/health_ratio.py [--only embedded|redis] [--duration 10] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx

BIN = Path(sys.executable).parent
CLI = BIN / "compliance-api"
SECRET_KEY = "bench-secret-key-0123456789-abcdefghijklmnop"  # >= 32 characters, not a placeholder
PG_ADMIN_DSN = os.environ.get("BENCH_PG_ADMIN_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
PG_DATABASE = os.environ.get("BENCH_PG_DATABASE", "compliance_bench")
PG_URL = f"postgresql://postgres@127.0.0.1:5432/{PG_DATABASE}"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
TARGETS = {"embedded": 0.8, "redis": 0.6}
FREE_BURST = 120
FREE_PER_SECOND = 1.0  # 60 per minute

WRK_REPORT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,'
    .. '"non2xx":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, e.status, e.connect, e.read, e.write, e.timeout))
end
"""

# Everything this script started, so that every exit path can stop it (process groups we own).
_STARTED: list[subprocess.Popen[bytes]] = []


# --------------------------------------------------------------------------------------------- processes


def stop_all() -> None:
    for proc in reversed(_STARTED):
        if proc.poll() is not None:
            continue
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
    _STARTED.clear()


def _on_signal(signum: int, _frame: object) -> None:
    print(f"\n{signal.Signals(signum).name}: stopping the servers", file=sys.stderr, flush=True)
    stop_all()
    sys.exit(128 + signum)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pinned(cpu: int | None, argv: list[str]) -> list[str]:
    return ["taskset", "-c", str(cpu), *argv] if cpu is not None else argv


def cli(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run([str(CLI), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"compliance-api {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout.strip()


def create_token(env: dict[str, str], cwd: Path, plan: str) -> str:
    email = f"bench-{plan}-{uuid.uuid4().hex[:12]}@example.com"
    cli(env, cwd, "users", "create", email, "--plan", plan)
    return cli(env, cwd, "tokens", "create", email).splitlines()[-1].strip()


@dataclass
class Server:
    name: str
    env: dict[str, str]
    workdir: Path
    cpu: int | None
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        """The server's command line (a benchmark may serve something else on the same terms)."""
        return [str(CLI), "serve", "--host", "127.0.0.1", "--port", str(self.port)]

    def start(self) -> None:
        self.log_path = self.workdir / f"server-{self.name}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                pinned(self.cpu, self.argv()),
                env=self.env,
                cwd=self.workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stop_all() kills it and nothing else
            )
        _STARTED.append(self.proc)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server {self.name} exited ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                if httpx.get(self.base_url + "/livez", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"server {self.name} did not answer /livez within 30 s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def log_lines(self) -> int:
        if self.log_path is None or not self.log_path.exists():
            return 0
        with open(self.log_path, "rb") as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)


# --------------------------------------------------------------------------------------------- wrk


@dataclass
class Run:
    rps: float
    requests: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    non2xx: int
    socket_errors: int
    server_cpu: float = 0.0  # CPU seconds the server used per wall second during the run (1.0 = a whole CPU)


def wrk(url: str, seconds: float, *, cpu: int | None, connections: int, token: str | None, script: Path) -> Run:
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency", "--timeout", "10s"]
    if token:
        argv += ["-H", f"Authorization: Bearer {token}"]
    argv += ["-s", str(script), url]
    done = subprocess.run(pinned(cpu, argv), capture_output=True, text=True, timeout=seconds + 60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr or done.stdout}")
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("BENCH_JSON ")), None)
    if line is None:
        raise RuntimeError(f"no report from wrk:\n{done.stdout}\n{done.stderr}")
    raw = json.loads(line.removeprefix("BENCH_JSON "))
    return Run(
        rps=raw["requests"] / (raw["duration_us"] / 1e6),
        requests=raw["requests"],
        p50_ms=raw["p50_us"] / 1000,
        p90_ms=raw["p90_us"] / 1000,
        p99_ms=raw["p99_us"] / 1000,
        max_ms=raw["max_us"] / 1000,
        non2xx=raw["non2xx"],
        socket_errors=raw["connect"] + raw["read"] + raw["write"] + raw["timeout"],
    )


# --------------------------------------------------------------------------------------------- rate limit


@dataclass
class Exactness:
    phases: list[dict[str, Any]]
    other_statuses: dict[int, int]

    @property
    def ok(self) -> bool:
        return not self.other_statuses and all(abs(p["allowed"] - p["expected"]) <= 1 for p in self.phases)


async def _burst(
    client: httpx.AsyncClient, count: int, concurrency: int, statuses: Counter[int]
) -> tuple[float, float]:
    """Send `count` GETs /v1/health with `concurrency` in flight; (time of first send, time of last answer)."""
    remaining = count
    first_sent = math.inf
    last_answer = 0.0

    async def worker() -> None:
        nonlocal remaining, first_sent, last_answer
        while remaining > 0:
            remaining -= 1
            first_sent = min(first_sent, time.monotonic())
            response = await client.get("/v1/health")
            last_answer = max(last_answer, time.monotonic())
            statuses[response.status_code] += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return first_sent, last_answer


async def check_exactness(base_url: str, token: str, *, first: int, pause: float, second: int) -> Exactness:
    """Phase 1: `first` requests at once; at `pause` s after the first, `second` more. Compare with GCRA.

    The bucket (burst 120, one more per second) starts full at the first request and never fills up again within
    a few seconds, so by time t the total allowed is `120 + floor(t - t_first)` (capped by what was asked).
    """
    concurrency = 8
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, headers=headers, limits=limits, timeout=10) as client:
        one: Counter[int] = Counter()
        t_first, t_end1 = await _burst(client, first, concurrency, one)
        # Start phase 2 `pause` seconds after the first request: its answers then arrive well clear of a whole
        # second (where one more request is allowed), so the model's expectation is not a coin toss.
        await asyncio.sleep(max(0.0, t_first + pause - time.monotonic()))
        two: Counter[int] = Counter()
        _, t_end2 = await _burst(client, second, concurrency, two)
    allowed1 = one[200]
    expected1 = min(first, FREE_BURST + math.floor((t_end1 - t_first) * FREE_PER_SECOND))
    expected_total = min(first + second, FREE_BURST + math.floor((t_end2 - t_first) * FREE_PER_SECOND))
    others = {s: n for s, n in (one + two).items() if s not in (200, 429)}
    return Exactness(
        phases=[
            {
                "phase": f"{first} at once",
                "sent": first,
                "allowed": allowed1,
                "rejected": one[429],
                "elapsed_s": t_end1 - t_first,
                "expected": expected1,
            },
            {
                "phase": f"+{second} at t={pause:g} s",
                "sent": second,
                "allowed": two[200],
                "rejected": two[429],
                "elapsed_s": t_end2 - t_first,
                "expected": expected_total - allowed1,
            },
        ],
        other_statuses=others,
    )


PRO_BURST = 1200
PRO_PER_SECOND = 10.0  # 600 per minute


async def check_across_processes(
    bases: list[str], token: str, *, seconds: float, concurrency: int = 32
) -> dict[str, float]:
    """Hammer two server processes sharing one Redis with one `pro` token for `seconds`; compare with GCRA.

    One shared bucket allows `1200 + 10 per elapsed second`; a bucket per process would allow about twice that.
    """
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    statuses: Counter[int] = Counter()
    async with httpx.AsyncClient(headers=headers, limits=limits, timeout=10) as client:
        t_first = time.monotonic()
        stop_at = t_first + seconds
        last_answer = t_first

        async def worker(index: int) -> None:
            nonlocal last_answer
            sent = 0
            while time.monotonic() < stop_at:
                base = bases[(index + sent) % len(bases)]
                response = await client.get(base + "/v1/health")
                last_answer = max(last_answer, time.monotonic())
                statuses[response.status_code] += 1
                sent += 1

        await asyncio.gather(*(worker(i) for i in range(concurrency)))
    elapsed = last_answer - t_first
    expected = PRO_BURST + math.floor(elapsed * PRO_PER_SECOND)
    allowed = statuses[200]
    return {
        "sent": float(sum(statuses.values())),
        "allowed": float(allowed),
        "rejected": float(statuses[429]),
        "other": float(sum(n for s, n in statuses.items() if s not in (200, 429))),
        "elapsed_s": elapsed,
        "expected": float(expected),
        "deviation": abs(allowed - expected) / expected,
    }


# --------------------------------------------------------------------------------------------- backends


async def ensure_pg_database() -> None:
    import asyncpg  # type: ignore[import-untyped]  # only the redis backend needs it

    conn = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        if not await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", PG_DATABASE):
            await conn.execute(f'CREATE DATABASE "{PG_DATABASE}"')
    finally:
        await conn.close()


def backend_env(name: str, workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPLIANCE_")}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    env.update(
        COMPLIANCE_SECRET_KEY=SECRET_KEY,
        COMPLIANCE_VAR_DIR=str(workdir / "var"),
        COMPLIANCE_ACCESS_LOG="true",
        COMPLIANCE_LOG_LEVEL="info",
        PYTHONDONTWRITEBYTECODE="1",
    )
    if name == "redis":
        env.update(DATABASE_URL=PG_URL, REDIS_URL=REDIS_URL)
    return env


@dataclass
class Result:
    name: str
    full: list[Run]
    bare: list[Run]
    exactness: Exactness | None
    log_lines: int
    across: dict[str, float] | None = None

    @staticmethod
    def _rps(runs: list[Run]) -> float:
        return sum(r.rps for r in runs) / len(runs)

    @staticmethod
    def _p99(runs: list[Run]) -> float:
        return max(r.p99_ms for r in runs)

    @property
    def ratio(self) -> float:
        return self._rps(self.full) / self._rps(self.bare)

    @property
    def round_ratios(self) -> list[float]:
        """full/bare of each round: the two were measured back to back, so each is a paired comparison."""
        return [f.rps / b.rps for f, b in zip(self.full, self.bare, strict=True)]

    @property
    def meets_target(self) -> bool:
        return self.ratio >= TARGETS[self.name]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (to see whether the server had its CPU to itself)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_backend(name: str, args: argparse.Namespace) -> Result:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    server = None
    try:
        env = backend_env(name, workdir)
        if name == "redis":
            asyncio.run(ensure_pg_database())
        cli(env, workdir, "migrate")
        full_token = create_token(env, workdir, "internal")
        free_token = create_token(env, workdir, "free") if not args.skip_exactness else ""
        script = workdir / "report.lua"
        script.write_text(WRK_REPORT)
        server = Server(name, env, workdir, args.server_cpu)
        server.start()
        assert server.proc is not None
        pid = server.proc.pid
        print(
            f"[{name}] server pid {pid} on port {server.port} (CPU {args.server_cpu}), files in {workdir}", flush=True
        )

        def measure(url: str, token: str | None, seconds: float) -> Run:
            return wrk(url, seconds, cpu=args.client_cpu, connections=args.connections, token=token, script=script)

        endpoints = {"full": ("/v1/health", full_token), "bare": ("/livez", None)}
        runs: dict[str, list[Run]] = {"full": [], "bare": []}
        for round_no in range(args.rounds):
            for kind in ("full", "bare") if round_no % 2 == 0 else ("bare", "full"):
                path, token = endpoints[kind]
                if args.warmup > 0:
                    measure(server.base_url + path, token, args.warmup)
                cpu_before, wall_before = cpu_seconds(pid), time.monotonic()
                run = measure(server.base_url + path, token, args.duration)
                run.server_cpu = (cpu_seconds(pid) - cpu_before) / (time.monotonic() - wall_before)
                runs[kind].append(run)
                flag = f"  NON-2XX={run.non2xx}" if run.non2xx else ""
                flag += f"  SOCKET-ERRORS={run.socket_errors}" if run.socket_errors else ""
                print(
                    f"[{name}] round {round_no + 1} {kind} {path:10} rps={run.rps:8.1f}  p50={run.p50_ms:6.2f} ms"
                    f"  p99={run.p99_ms:8.2f} ms  max={run.max_ms:8.2f} ms  server cpu={run.server_cpu:4.0%}{flag}",
                    flush=True,
                )
        exactness = None
        if not args.skip_exactness:
            exactness = asyncio.run(
                check_exactness(server.base_url, free_token, first=200, pause=args.pause, second=20)
            )
        across = None
        if name == "redis" and not args.skip_exactness:
            pro_token = create_token(env, workdir, "pro")
            second = Server(f"{name}-2", env, workdir, args.server_cpu)
            second.start()
            try:
                across = asyncio.run(check_across_processes([server.base_url, second.base_url], pro_token, seconds=5))
            finally:
                second.stop()
            print(
                f"[{name}] two processes, one Redis, pro token (burst 1200, 600/min) for 5 s: sent={across['sent']:.0f}"
                f" 200={across['allowed']:.0f} 429={across['rejected']:.0f} other={across['other']:.0f}"
                f" model={across['expected']:.0f} deviation={across['deviation']:.2%} (target <= 1%)",
                flush=True,
            )
        server.stop()
        return Result(name, runs["full"], runs["bare"], exactness, server.log_lines(), across)
    finally:
        if server is not None:
            server.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


# --------------------------------------------------------------------------------------------- report


def machine(loadavg: str) -> dict[str, str]:
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), "")
    except OSError:
        pass
    wrk_version = subprocess.run(["wrk", "-v"], capture_output=True, text=True, check=False)
    versions = {}
    for package in ("fastapi", "starlette", "uvicorn", "uvloop", "httptools", "sqlalchemy", "redis", "structlog"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "-"
    return {
        "loadavg": loadavg,
        "nproc": str(os.cpu_count()),
        "cpu": model,
        "python": platform.python_version(),
        "kernel": platform.release(),
        "wrk": (wrk_version.stdout + wrk_version.stderr).split("[")[0].strip().split("\n")[0],
        "packages": ", ".join(f"{k} {v}" for k, v in versions.items()),
    }


def summary_lines(results: list[Result]) -> list[str]:
    lines = []
    for r in results:
        lines.append(
            f"{r.name:8}  full rps={Result._rps(r.full):8.1f} p99={Result._p99(r.full):8.2f} ms   "
            f"bare rps={Result._rps(r.bare):8.1f} p99={Result._p99(r.bare):8.2f} ms   "
            f"ratio={r.ratio:.2f}  (target >= {TARGETS[r.name]}: {'met' if r.meets_target else 'NOT MET'}; "
            f"per round {', '.join(f'{x:.2f}' for x in r.round_ratios)})"
        )
        if any(run.non2xx or run.socket_errors for run in r.full + r.bare):
            lines.append(f"{r.name:8}  WARNING: non-2xx answers or socket errors during the load runs (see above)")
        if min(run.server_cpu for run in r.full + r.bare) < 0.9:
            lines.append(
                f"{r.name:8}  WARNING: the server got less than 90% of its CPU in some run: "
                "something else runs on it, or the server was not the bottleneck"
            )
    for r in results:
        if r.exactness is None:
            continue
        for p in r.exactness.phases:
            lines.append(
                f"{r.name:8}  rate limit (free: burst {FREE_BURST}, 60/min) {p['phase']:>16}: "
                f"200={p['allowed']:3} 429={p['rejected']:3}  t={p['elapsed_s']:.3f} s  "
                f"model={p['expected']:3}  {'ok' if abs(p['allowed'] - p['expected']) <= 1 else 'MISMATCH'}"
            )
        if r.exactness.other_statuses:
            lines.append(f"{r.name:8}  rate limit: unexpected statuses {r.exactness.other_statuses}")
    return lines


def preamble(args: argparse.Namespace, info: dict[str, str], command: str, averaged: str) -> list[str]:
    """The opening lines of a results section: date, machine, command, how each figure was measured."""
    return [
        f"Date: {date.today().isoformat()}",
        "",
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), Linux {info['kernel']}, Python {info['python']}, "
        f"{info['wrk']}",
        f"Packages: {info['packages']}",
        "",
        f"Command: `{command}`",
        "",
        f"Each figure: one server worker on CPU {args.server_cpu}, `wrk -t1 -c{args.connections} "
        f"-d{args.duration}s --latency` on CPU {args.client_cpu}, after a {args.warmup:g} s warm-up; "
        f"{args.rounds} rounds in alternating order; {averaged}.",
        f"Load average before the run: {info['loadavg']}",
    ]


def markdown(results: list[Result], args: argparse.Namespace, info: dict[str, str], command: str) -> str:
    out = [
        *preamble(args, info, command, "rps is the mean of the rounds, p99 the worst"),
        "",
        "| backend | /v1/health rps | /v1/health p99 | /livez rps | /livez p99 | ratio | per round | target |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in results:
        out.append(
            f"| {r.name} | {Result._rps(r.full):.0f} | {Result._p99(r.full):.2f} ms | {Result._rps(r.bare):.0f} | "
            f"{Result._p99(r.bare):.2f} ms | {r.ratio:.2f} | {', '.join(f'{x:.2f}' for x in r.round_ratios)} | "
            f">= {TARGETS[r.name]} {'met' if r.meets_target else '**not met**'} |"
        )
    out += [
        "",
        "Per run (server cpu: CPU seconds the server used per second; 100% = it had CPU 0 to itself and was busy):",
        "",
        "| backend | round | endpoint | rps | p50 | p99 | max | non-2xx | server cpu |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        for kind, runs in (("/v1/health", r.full), ("/livez", r.bare)):
            for i, run in enumerate(runs):
                out.append(
                    f"| {r.name} | {i + 1} | {kind} | {run.rps:.0f} | {run.p50_ms:.2f} ms | {run.p99_ms:.2f} ms | "
                    f"{run.max_ms:.2f} ms | {run.non2xx} | {run.server_cpu:.0%} |"
                )
    out += ["", "Access-log lines written: " + ", ".join(f"{r.name} {r.log_lines}" for r in results)]
    exact = [r for r in results if r.exactness is not None]
    if exact:
        out += [
            "",
            f"Rate-limit exactness (`free` token: burst {FREE_BURST}, 60/min; model: allowed = burst + 1 per "
            "elapsed second since the first request):",
            "",
            "| backend | phase | sent | 200 | 429 | elapsed since first | model 200 | within 1 |",
            "|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for r in exact:
            assert r.exactness is not None
            for p in r.exactness.phases:
                out.append(
                    f"| {r.name} | {p['phase']} | {p['sent']} | {p['allowed']} | {p['rejected']} | "
                    f"{p['elapsed_s']:.3f} s | {p['expected']} | "
                    f"{'yes' if abs(p['allowed'] - p['expected']) <= 1 else '**no**'} |"
                )
    for r in results:
        if r.across is not None:
            a = r.across
            out += [
                "",
                "Across processes (two servers on one Redis, one `pro` token, burst 1200 + 10/s, 5 s of load from "
                "32 connections alternating between the servers):",
                "",
                "| backend | sent | 200 | 429 | other | elapsed | model 200 | deviation | target |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---|",
                f"| {r.name} | {a['sent']:.0f} | {a['allowed']:.0f} | {a['rejected']:.0f} | {a['other']:.0f} | "
                f"{a['elapsed_s']:.2f} s | {a['expected']:.0f} | {a['deviation']:.2%} | "
                f"<= 1% {'met' if a['deviation'] <= 0.01 else '**not met**'} |",
            ]
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["embedded", "redis"], help="Run one backend only.")
    parser.add_argument("--duration", type=int, default=10, help="Seconds per measurement (default 10).")
    parser.add_argument("--warmup", type=float, default=2, help="Warm-up seconds before each measurement (2).")
    parser.add_argument("--rounds", type=int, default=2, help="Rounds per backend, order alternating (2).")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections (64).")
    parser.add_argument("--server-cpu", type=int, default=0, help="CPU for the server (0).")
    parser.add_argument("--client-cpu", type=int, default=1, help="CPU for wrk (1).")
    parser.add_argument("--pause", type=float, default=2.4, help="Rate-limit check: phase 2 starts at t=2.4 s.")
    parser.add_argument("--skip-exactness", action="store_true", help="Skip the rate-limit exactness check.")
    parser.add_argument("--markdown", type=Path, help="Also write the results as Markdown to this file.")
    parser.add_argument("--strict", action="store_true", help="Exit 1 when a target or the exactness check fails.")
    parser.add_argument("--keep", action="store_true", help="Keep the temporary directories (server logs).")
    args = parser.parse_args()

    for tool in ("wrk", "taskset"):
        if shutil.which(tool) is None:
            print(f"error: `{tool}` not found (apt-get install -y wrk util-linux)", file=sys.stderr)
            return 2
    if not CLI.exists():
        print(f"error: {CLI} not found; run with the project's virtualenv python", file=sys.stderr)
        return 2
    if (os.cpu_count() or 1) < 2:
        print("warning: fewer than 2 CPUs; server and wrk share one CPU, figures are not comparable")
        args.server_cpu = args.client_cpu = None

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    loadavg = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load average {loadavg} (other work on these CPUs skews the figures)", flush=True)
    started = time.monotonic()
    results: list[Result] = []
    try:
        for name in ("embedded", "redis"):
            if args.only in (None, name):
                results.append(bench_backend(name, args))
    finally:
        stop_all()

    print()
    for line in summary_lines(results):
        print(line)
    print(f"(took {time.monotonic() - started:.0f} s)")
    if args.markdown:
        command = " ".join([".venv/bin/python", "bench/health_ratio.py", *sys.argv[1:]])
        args.markdown.write_text(markdown(results, args, machine(loadavg), command))
        print(f"wrote {args.markdown}")
    failed = any(
        not r.meets_target
        or (r.exactness is not None and not r.exactness.ok)
        or (r.across is not None and r.across["deviation"] > 0.01)
        for r in results
    )
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
