"""What the clients' hand-written layer (`compliance_api_client.sdk`) adds to a call, against a local server.

One server (SQLite, one worker, CPU 0); the client on the rest. Alternating blocks of `GET /v1/health` through the
generated client as generated (`AuthenticatedClient`) and through `sdk.client(...)` (retry transport, Idempotency-Key
hook, problem check), each on a kept-alive connection, the same number of calls each. A shared machine's load drifts
over seconds, so each pair of neighbouring blocks gives one ratio and the median of those is the figure
(`ratio = layer / plain`); the client's own CPU time per call is printed beside it. Target: ratio <= 1.05. Run with
the generated client installed (`make clients`):

    var/clients/generator/bin/python bench/client_layer.py [--calls 50] [--rounds 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import harness
from harness import Server, base_env, cli, create_token, stop_all, stop_on_signals

TARGET = 1.05
harness.CLI = Path(__file__).parent.parent / ".venv" / "bin" / "compliance-api"  # run by the generator's Python


def per_call(api: Any, calls: int) -> tuple[float, float]:
    """Wall-clock and client CPU seconds per call."""
    from compliance_api_client.api.health import health_get  # type: ignore[import-not-found]

    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        assert health_get.sync_detailed(client=api).status_code == 200
    return (time.perf_counter() - started) / calls, (time.process_time() - cpu) / calls


def main() -> int:
    from compliance_api_client import AuthenticatedClient  # type: ignore[import-not-found]  # built by `make clients`
    from compliance_api_client.sdk import client  # type: ignore[import-not-found]

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    stop_on_signals()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        env = base_env(workdir)
        env["COMPLIANCE_ACCESS_LOG"] = "false"
        cli(env, workdir, "migrate")
        token = create_token(env, workdir, "internal")
        server = Server("client-layer", env, workdir, cpu=0)
        try:
            server.start()
            plain = AuthenticatedClient(server.base_url, token=token)
            layered = client(server.base_url, token=token)
            per_call(plain, 50), per_call(layered, 50)  # warm both connections
            pairs = [(per_call(plain, args.calls), per_call(layered, args.calls)) for _ in range(args.rounds)]
        finally:
            stop_all()
    ratio = statistics.median(layer[0] / base[0] for base, layer in pairs)
    plain_ms = 1000 * statistics.median(base[0] for base, _ in pairs)
    layer_ms = 1000 * statistics.median(layer[0] for _, layer in pairs)
    plain_cpu = 1000 * statistics.median(base[1] for base, _ in pairs)
    layer_cpu = 1000 * statistics.median(layer[1] for _, layer in pairs)
    print(f"{args.rounds} pairs of blocks of {args.calls} calls; medians:")
    print(f"plain generated client: {plain_ms:.3f} ms per call, client CPU {plain_cpu:.3f} ms")
    print(f"with the sdk layer:     {layer_ms:.3f} ms per call, client CPU {layer_cpu:.3f} ms")
    print(f"ratio = {ratio:.3f} (target <= {TARGET}: {'met' if ratio <= TARGET else 'NOT met'})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
