"""What the benchmark scripts share: servers started and always stopped, wrk runs, the machine and result tables.

A server is `compliance-api serve` (one uvicorn worker) pinned to a CPU with `taskset`, in its own process group;
`wrk` runs pinned to another CPU and reports through a Lua `done` hook (`WRK_REPORT`), so figures are parsed from
one JSON line rather than from wrk's text. Everything started here is stopped on every exit path (`stop_all`, also
on SIGINT and SIGTERM once `stop_on_signals` ran).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from importlib import metadata
from pathlib import Path

import httpx

BIN = Path(sys.executable).parent
CLI = BIN / "compliance-api"
SECRET_KEY = "bench-secret-PYjBrWYyoWNIEbxajBYXN4BNsmVNa9PDkZARcQ05"  # >= 32 characters, not a placeholder
PG_ADMIN_DSN = os.environ.get("BENCH_PG_ADMIN_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
PG_DATABASE = os.environ.get("BENCH_PG_DATABASE", "compliance_bench")
PG_URL = f"postgresql://postgres@127.0.0.1:5432/{PG_DATABASE}"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")

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

# Everything the script started, so that every exit path can stop it (process groups we own).
_STARTED: list[subprocess.Popen[bytes]] = []


# --------------------------------------------------------------------------------------------- processes


def started(proc: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    """Register a process started in its own session, so that `stop_all` stops it."""
    _STARTED.append(proc)
    return proc


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


def stop_on_signals() -> None:
    """Stop everything started here on SIGINT and SIGTERM too."""
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)


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


NO_SANDBOX_PORT = {"COMPLIANCE_SANDBOX_PORT": "0"}
"""Servers on free ports listen on no sandbox port: the port after a free one may be taken."""


def base_env(workdir: Path) -> dict[str, str]:
    """A server's environment: SQLite under `workdir/var`, no Redis, the access log on (as in production)."""
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
    return env


async def ensure_pg_database(database: str) -> None:
    """Create the PostgreSQL database if missing (through `PG_ADMIN_DSN`)."""
    import asyncpg  # type: ignore[import-untyped]  # only the PostgreSQL backends need it

    conn = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        if not await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", database):
            await conn.execute(f'CREATE DATABASE "{database}"')
    finally:
        await conn.close()


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

    @property
    def pid(self) -> int:
        assert self.proc is not None, "the server is not started"
        return self.proc.pid

    def argv(self) -> list[str]:
        """The server's command line (a benchmark may serve something else on the same terms)."""
        return [str(CLI), "serve", "--host", "127.0.0.1", "--port", str(self.port)]

    def start(self) -> None:
        self.log_path = self.workdir / f"server-{self.name}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                pinned(self.cpu, self.argv()),
                env={**NO_SANDBOX_PORT, **self.env},
                cwd=self.workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stop_all() kills it and nothing else
            )
        started(self.proc)
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

    def figures(self, p50_width: int = 6) -> str:
        """The run on one line, flagging non-2xx answers and socket errors."""
        flag = f"  NON-2XX={self.non2xx}" if self.non2xx else ""
        flag += f"  SOCKET-ERRORS={self.socket_errors}" if self.socket_errors else ""
        return (
            f"rps={self.rps:8.1f}  p50={self.p50_ms:{p50_width}.2f} ms  p99={self.p99_ms:8.2f} ms"
            f"  max={self.max_ms:8.2f} ms  server cpu={self.server_cpu:4.0%}{flag}"
        )


def mean_rps(runs: Sequence[Run]) -> float:
    return sum(r.rps for r in runs) / len(runs)


def worst_p99(runs: Sequence[Run]) -> float:
    return max(r.p99_ms for r in runs)


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


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (to see whether the server had its CPU to itself)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(
    server: Server, url: str, seconds: float, *, cpu: int | None, connections: int, token: str | None, script: Path
) -> Run:
    """One wrk run with the CPU share the server got meanwhile (`Run.server_cpu`)."""
    cpu_before, wall_before = cpu_seconds(server.pid), time.monotonic()
    run = wrk(url, seconds, cpu=cpu, connections=connections, token=token, script=script)
    run.server_cpu = (cpu_seconds(server.pid) - cpu_before) / (time.monotonic() - wall_before)
    return run


def logged_statuses(log_path: Path, route: str) -> dict[int, int]:
    """Status counts the server's access log recorded for `route` (one JSON line per answered request)."""
    counts: dict[int, int] = {}
    with open(log_path, "rb") as handle:
        for line in handle:
            if route.encode() not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("event") == "request" and entry.get("route") == route:
                counts[entry["status"]] = counts.get(entry["status"], 0) + 1
    return counts


# --------------------------------------------------------------------------------------------- the machine


def preflight(args: argparse.Namespace, tools: Sequence[str], install: str) -> int | None:
    """Exit status 2 when a tool or the CLI is missing; on one CPU, server and wrk share it (with a warning)."""
    for tool in tools:
        if shutil.which(tool) is None:
            print(f"error: `{tool}` not found (apt-get install -y {install})", file=sys.stderr)
            return 2
    if not CLI.exists():
        print(f"error: {CLI} not found; run with the project's virtualenv python", file=sys.stderr)
        return 2
    if (os.cpu_count() or 1) < 2:
        print("warning: fewer than 2 CPUs; server and wrk share one CPU, figures are not comparable")
        args.server_cpu = args.client_cpu = None
    return None


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def machine(loadavg: str) -> dict[str, str]:
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), "")
    except OSError:
        pass
    wrk_version = (
        subprocess.run(["wrk", "-v"], capture_output=True, text=True, check=False)
        if shutil.which("wrk")
        else subprocess.CompletedProcess([], 0, "no wrk", "")
    )
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


# --------------------------------------------------------------------------------------------- tables


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


def table(header: Sequence[str], align: str, rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table; `align` has one letter per column, `l` or `r` (numbers)."""
    rule = "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"
    return [table_row(header), rule, *(table_row(row) for row in rows)]


def table_row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def run_rows(name: str, labelled: Iterable[tuple[str, list[Run]]]) -> list[list[object]]:
    """Rows of the per-run table (`RUN_HEADER`): each run of each label, numbered by round."""
    return [
        [
            name,
            i + 1,
            label,
            f"{run.rps:.0f}",
            f"{run.p50_ms:.2f} ms",
            f"{run.p99_ms:.2f} ms",
            f"{run.max_ms:.2f} ms",
            run.non2xx,
            f"{run.server_cpu:.0%}",
        ]
        for label, runs in labelled
        for i, run in enumerate(runs)
    ]


RUN_HEADER = ("backend", "round", "endpoint", "rps", "p50", "p99", "max", "non-2xx", "server cpu")
RUN_ALIGN = "lllrrrrrr"


# --------------------------------------------------------------------------------------------- webhook probes


def start_receiver(workdir: Path, slow_seconds: float = 2.0) -> str:
    """`receiver.py` (fast and slow paths, arrivals with their latency) in a process of its own; its base URL."""
    port = free_port()
    argv = [sys.executable, "-m", "uvicorn", "receiver:app", "--app-dir", str(Path(__file__).parent)]
    argv += ["--port", str(port), "--log-level", "warning", "--backlog", "4096"]
    env = {"RECEIVER_SLOW_SECONDS": str(slow_seconds), "PATH": "/usr/bin:/bin"}
    started(subprocess.Popen(argv, cwd=workdir, env=env, start_new_session=True))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/stats", timeout=0.5)
            return url
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the receiver did not start")


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


@dataclass
class Probed:
    """Test events sent while something else ran: the first-attempt latency of each that arrived, and the lower
    bound of those that had not when the probe gave up."""

    sent: int
    latencies: list[float]
    missing: list[float]  # how long each event that never arrived had waited when the probe stopped looking
    other_arrivals: Counter[str] = field(default_factory=Counter)  # arrivals of other deliveries, by path

    def bounds(self) -> list[float]:
        return self.latencies + self.missing

    def figure(self, share: float) -> str:
        """A percentile in seconds; `>= x s` when it falls on an event that never arrived."""
        values = self.bounds()
        if not values:
            return "-"
        value = percentile(values, share)
        return f"{value:.2f} s" if value in self.latencies else f">= {value:.0f} s"


async def probe_test_events(
    base: str, token: str, endpoint: str, receiver: str, *, seconds: float, interval: float, grace: float
) -> Probed:
    """`POST /v1/webhook-endpoints/{endpoint}/test` every `interval` for `seconds`; then collect the receiver's
    arrivals until every test event arrived or `grace` seconds passed."""
    created: dict[str, float] = {}
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as api:

        async def one() -> None:
            answer = await api.post(f"/v1/webhook-endpoints/{endpoint}/test")
            answer.raise_for_status()
            sent = answer.json()
            created[sent["event_id"]] = datetime.fromisoformat(sent["created_at"]).timestamp()

        tasks = []
        began = time.monotonic()
        while time.monotonic() - began < seconds:
            tasks.append(asyncio.create_task(one()))
            await asyncio.sleep(interval)
        await asyncio.gather(*tasks)
        latencies: dict[str, float] = {}
        others: Counter[str] = Counter()
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and len(latencies) < len(created):
            for arrival in (await api.get(receiver + "/stats")).json():
                if arrival["id"] in created:
                    latencies.setdefault(arrival["id"], float(arrival["latency"]))
                else:
                    others[arrival["kind"]] += 1
            await asyncio.sleep(0.2)
    now = time.time()
    missing = [now - at for event_id, at in created.items() if event_id not in latencies]
    return Probed(len(created), list(latencies.values()), missing, others)
