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
import math
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness
import httpx
from harness import Run, mean_rps, worst_p99

TARGETS = {"embedded": 0.8, "redis": 0.6}
FREE_BURST = 120
FREE_PER_SECOND = 1.0  # 60 per minute


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


def backend_env(name: str, workdir: Path) -> dict[str, str]:
    env = harness.base_env(workdir)
    if name == "redis":
        env.update(DATABASE_URL=harness.PG_URL, REDIS_URL=harness.REDIS_URL)
    return env


@dataclass
class Result:
    name: str
    full: list[Run]
    bare: list[Run]
    exactness: Exactness | None
    log_lines: int
    across: dict[str, float] | None = None

    @property
    def ratio(self) -> float:
        return mean_rps(self.full) / mean_rps(self.bare)

    @property
    def round_ratios(self) -> list[float]:
        """full/bare of each round: the two were measured back to back, so each is a paired comparison."""
        return [f.rps / b.rps for f, b in zip(self.full, self.bare, strict=True)]

    @property
    def meets_target(self) -> bool:
        return self.ratio >= TARGETS[self.name]


def bench_backend(name: str, args: argparse.Namespace) -> Result:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    server = None
    try:
        env = backend_env(name, workdir)
        if name == "redis":
            asyncio.run(harness.ensure_pg_database(harness.PG_DATABASE))
        harness.cli(env, workdir, "migrate")
        full_token = harness.create_token(env, workdir, "internal")
        free_token = harness.create_token(env, workdir, "free") if not args.skip_exactness else ""
        script = workdir / "report.lua"
        script.write_text(harness.WRK_REPORT)
        server = harness.Server(name, env, workdir, args.server_cpu)
        server.start()
        print(
            f"[{name}] server pid {server.pid} on port {server.port} (CPU {args.server_cpu}), files in {workdir}",
            flush=True,
        )

        def measure(url: str, token: str | None, seconds: float) -> Run:
            return harness.measured(
                server, url, seconds, cpu=args.client_cpu, connections=args.connections, token=token, script=script
            )

        endpoints = {"full": ("/v1/health", full_token), "bare": ("/livez", None)}
        runs: dict[str, list[Run]] = {"full": [], "bare": []}
        for round_no in range(args.rounds):
            for kind in ("full", "bare") if round_no % 2 == 0 else ("bare", "full"):
                path, token = endpoints[kind]
                if args.warmup > 0:
                    measure(server.base_url + path, token, args.warmup)
                run = measure(server.base_url + path, token, args.duration)
                runs[kind].append(run)
                print(f"[{name}] round {round_no + 1} {kind} {path:10} {run.figures()}", flush=True)
        exactness = None
        if not args.skip_exactness:
            exactness = asyncio.run(
                check_exactness(server.base_url, free_token, first=200, pause=args.pause, second=20)
            )
        across = None
        if name == "redis" and not args.skip_exactness:
            pro_token = harness.create_token(env, workdir, "pro")
            second = harness.Server(f"{name}-2", env, workdir, args.server_cpu)
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


def summary_lines(results: list[Result]) -> list[str]:
    lines = []
    for r in results:
        lines.append(
            f"{r.name:8}  full rps={mean_rps(r.full):8.1f} p99={worst_p99(r.full):8.2f} ms   "
            f"bare rps={mean_rps(r.bare):8.1f} p99={worst_p99(r.bare):8.2f} ms   "
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


def markdown(results: list[Result], args: argparse.Namespace, info: dict[str, str], command: str) -> str:
    out = [*harness.preamble(args, info, command, "rps is the mean of the rounds, p99 the worst"), ""]
    out += harness.table(
        ("backend", "/v1/health rps", "/v1/health p99", "/livez rps", "/livez p99", "ratio", "per round", "target"),
        "lrrrrrll",
        (
            [
                r.name,
                f"{mean_rps(r.full):.0f}",
                f"{worst_p99(r.full):.2f} ms",
                f"{mean_rps(r.bare):.0f}",
                f"{worst_p99(r.bare):.2f} ms",
                f"{r.ratio:.2f}",
                ", ".join(f"{x:.2f}" for x in r.round_ratios),
                f">= {TARGETS[r.name]} {'met' if r.meets_target else '**not met**'}",
            ]
            for r in results
        ),
    )
    out += [
        "",
        "Per run (server cpu: CPU seconds the server used per second; 100% = it had CPU 0 to itself and was busy):",
        "",
    ]
    rows = [row for r in results for row in harness.run_rows(r.name, (("/v1/health", r.full), ("/livez", r.bare)))]
    out += harness.table(harness.RUN_HEADER, harness.RUN_ALIGN, rows)
    out += ["", "Access-log lines written: " + ", ".join(f"{r.name} {r.log_lines}" for r in results)]
    exact = [(r.name, r.exactness) for r in results if r.exactness is not None]
    if exact:
        out += [
            "",
            f"Rate-limit exactness (`free` token: burst {FREE_BURST}, 60/min; model: allowed = burst + 1 per "
            "elapsed second since the first request):",
            "",
        ]
        out += harness.table(
            ("backend", "phase", "sent", "200", "429", "elapsed since first", "model 200", "within 1"),
            "llrrrrrl",
            (
                [
                    name,
                    p["phase"],
                    p["sent"],
                    p["allowed"],
                    p["rejected"],
                    f"{p['elapsed_s']:.3f} s",
                    p["expected"],
                    "yes" if abs(p["allowed"] - p["expected"]) <= 1 else "**no**",
                ]
                for name, exactness in exact
                for p in exactness.phases
            ),
        )
    for r in results:
        if r.across is not None:
            a = r.across
            out += [
                "",
                "Across processes (two servers on one Redis, one `pro` token, burst 1200 + 10/s, 5 s of load from "
                "32 connections alternating between the servers):",
                "",
            ]
            out += harness.table(
                ("backend", "sent", "200", "429", "other", "elapsed", "model 200", "deviation", "target"),
                "lrrrrrrrl",
                [
                    [
                        r.name,
                        f"{a['sent']:.0f}",
                        f"{a['allowed']:.0f}",
                        f"{a['rejected']:.0f}",
                        f"{a['other']:.0f}",
                        f"{a['elapsed_s']:.2f} s",
                        f"{a['expected']:.0f}",
                        f"{a['deviation']:.2%}",
                        f"<= 1% {'met' if a['deviation'] <= 0.01 else '**not met**'}",
                    ]
                ],
            )
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

    missing = harness.preflight(args, ("wrk", "taskset"), "wrk util-linux")
    if missing is not None:
        return missing

    harness.stop_on_signals()
    loadavg = harness.load_average()
    print(f"load average {loadavg} (other work on these CPUs skews the figures)", flush=True)
    started = time.monotonic()
    results: list[Result] = []
    try:
        for name in ("embedded", "redis"):
            if args.only in (None, name):
                results.append(bench_backend(name, args))
    finally:
        harness.stop_all()

    print()
    for line in summary_lines(results):
        print(line)
    print(f"(took {time.monotonic() - started:.0f} s)")
    if args.markdown:
        command = " ".join([".venv/bin/python", "bench/health_ratio.py", *sys.argv[1:]])
        args.markdown.write_text(markdown(results, args, harness.machine(loadavg), command))
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
