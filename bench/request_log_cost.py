"""What the request log costs a request, in CPU: the app called in process as ASGI (no HTTP server, no client), one
request after another (access log off), and the process's CPU time per request, the log's background writes and a last
flush included.

CPU time is far less disturbed by other work on the machine than a server's requests per second under wrk, so a
before/after comparison stays meaningful on a busy machine. Three routes: `GET /v1/health` (authenticated, not
logged: the control), an unmatched `/v1/…` path (404, logged with its problem body) and `GET /v1/wtta/lookup` with an
invalid number (400, logged with its problem body). For the figure before the log existed, run the same script
with `PYTHONPATH` pointing at a checkout of the earlier commit (it skips the flush when the app has no log).

    .venv/bin/python bench/request_log_cost.py [--requests 5000] [--warmup 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, UserKind
from compliance_api.app import create_app
from compliance_api.auth import service as auth_service
from compliance_api.config import Settings
from compliance_api.kit.environment import Environment
from compliance_api.migrate import upgrade

SECRET_KEY = "bench-secret-PYjBrWYyoWNIEbxajBYXN4BNsmVNa9PDkZARcQ05"
ROUTES = (("/v1/health", b""), ("/v1/nope", b""), ("/v1/wtta/lookup", b"kvk=1"))


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _send(_: MutableMapping[str, Any]) -> None:
    return None


async def measure(requests: int, warmup: int) -> None:
    settings = Settings(var_dir=Path(tempfile.mkdtemp()), secret_key=SECRET_KEY, access_log=False, redis_url="")
    app = create_app(settings)
    services = app.state.services
    await upgrade(services.engine)
    async with services.sessionmaker.begin() as session:
        user = await accounts_service.create(session, email="b@example.com", kind=UserKind.business, plan=Plan.internal)
        _, token = await auth_service.create(
            session, user=user, environment=Environment.live, name="bench", pepper=services.pepper
        )
    headers = [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {token}".encode())]
    request_log = getattr(services, "request_log", None)

    def scope(path: str, query: bytes) -> dict[str, Any]:
        return {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query,
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 1),
            "server": ("127.0.0.1", 8000),
            "state": {},
        }

    async with app.router.lifespan_context(app):
        for path, query in ROUTES:
            for _ in range(warmup):
                await app(scope(path, query), _receive, _send)
            if request_log is not None:
                await request_log.flush()
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(requests):
                await app(scope(path, query), _receive, _send)
            if request_log is not None:
                await request_log.flush()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            print(
                f"{path:18s} cpu/request {cpu / requests * 1e6:7.1f} us   wall/request {wall / requests * 1e6:7.1f} us"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=5000, help="Requests per route (5000).")
    parser.add_argument("--warmup", type=int, default=1000, help="Warm-up requests per route (1000).")
    args = parser.parse_args()
    asyncio.run(measure(args.requests, args.warmup))


if __name__ == "__main__":
    main()
