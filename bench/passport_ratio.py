"""Passport operations against `/v1/health` in the same server and run: what reading a passport and verifying a
share-token (database reads, an Ed25519 signature and a recorded view per request) cost.

    .venv/bin/python bench/passport_ratio.py [--only embedded|redis] [--duration 10] [--rounds 2]

Reuses the server, wrk and environment helpers of `health_ratio.py`; every token has the `internal` plan so the rate
limiter never answers 429. Prints requests/second, p99 and `ratio = rps(operation) / rps(/v1/health)`.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from health_ratio import WRK_REPORT, Server, backend_env, cli, ensure_pg_database, wrk

OPERATIONS = ("/v1/health", "/v1/passport", "/v1/passport/{share}/verify")


def bench(name: str, args: argparse.Namespace) -> dict[str, list[float]]:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-passport-{name}-"))
    server = None
    try:
        env = backend_env(name, workdir)
        if name == "redis":
            asyncio.run(ensure_pg_database())
        cli(env, workdir, "migrate")
        cli(
            env,
            workdir,
            "users",
            "create",
            f"freelancer-{workdir.name}@example.com",
            "--kind",
            "freelancer",
            "--plan",
            "internal",
        )
        cli(env, workdir, "users", "create", f"verifier-{workdir.name}@example.com", "--plan", "internal")
        for check in ("identity", "kvk_registration", "vat_number"):
            cli(env, workdir, "passport", "verify", f"freelancer-{workdir.name}@example.com", check)
        share = cli(env, workdir, "passport", "share", f"freelancer-{workdir.name}@example.com")
        own = cli(env, workdir, "tokens", "create", f"freelancer-{workdir.name}@example.com")
        verifier = cli(env, workdir, "tokens", "create", f"verifier-{workdir.name}@example.com")
        script = workdir / "report.lua"
        script.write_text(WRK_REPORT)
        server = Server(name, env, workdir, args.server_cpu)
        server.start()
        tokens = {"/v1/health": verifier, "/v1/passport": own, "/v1/passport/{share}/verify": verifier}
        results: dict[str, list[float]] = {op: [] for op in OPERATIONS}
        for round_no in range(args.rounds):
            for operation in OPERATIONS:
                url = server.base_url + operation.format(share=share)
                wrk(url, 2, cpu=args.client_cpu, connections=args.connections, token=tokens[operation], script=script)
                run = wrk(
                    url,
                    args.duration,
                    cpu=args.client_cpu,
                    connections=args.connections,
                    token=tokens[operation],
                    script=script,
                )
                results[operation] += [run.rps, run.p99_ms]
                print(
                    f"[{name}] round {round_no + 1} {operation:30} rps={run.rps:8.1f} p99={run.p99_ms:8.2f} ms"
                    f" non-2xx={run.non2xx} socket-errors={run.socket_errors}",
                    flush=True,
                )
                time.sleep(args.settle)  # requests still queued when wrk stops must not leak into the next run
        return results
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=("embedded", "redis"))
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--settle", type=float, default=5, help="Seconds of quiet between runs.")
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--client-cpu", type=int, default=1)
    args = parser.parse_args()
    for name in [args.only] if args.only else ["embedded", "redis"]:
        results = bench(name, args)
        health = sum(results["/v1/health"][0::2]) / args.rounds
        for operation in OPERATIONS:
            rps = sum(results[operation][0::2]) / args.rounds
            p99 = max(results[operation][1::2])
            print(f"[{name}] {operation:30} mean rps={rps:8.1f} worst p99={p99:7.2f} ms ratio={rps / health:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
