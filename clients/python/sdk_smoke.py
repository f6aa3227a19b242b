"""Smoke test of the hand-written layer (`compliance_api_client.sdk`), after smoke.py has filled the sandbox.

Run by clients/smoke.sh: `python sdk_smoke.py BASE_URL DEMO_JSON`. Against a stand-in server that answers 429, then
503, then drops the connection, then 200: the call succeeds, each attempt carries the same Idempotency-Key, and
`Retry-After` is honoured. Against the live server: a problem is raised with its code, detail and request id, and
`paginate`/`apaginate` read every item of a list one page at a time.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
from compliance_api_client.api.classify import classification_list
from compliance_api_client.api.events import event_list
from compliance_api_client.api.wtta import wtta_lookup
from compliance_api_client.models import ClassificationList, EventList
from compliance_api_client.sdk import ProblemError, apaginate, client, paginate

RETRY_AFTER = 1  # seconds the stand-in's 429 asks for


class Flaky(BaseHTTPRequestHandler):
    """Answers the n-th request by `SCRIPT[n]` (a status, or None to drop the connection) and records its headers."""

    SCRIPT: ClassVar[list[int | None]] = [429, 503, None, 201]
    seen: ClassVar[list[dict[str, str]]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status = self.SCRIPT[len(self.seen)]
        self.seen.append({**self.headers, "at": str(time.monotonic())})
        if status is None:
            self.close_connection = True
            self.connection.close()
            return
        body = json.dumps({"code": "rate_limited", "detail": "slow down"} if status >= 400 else {"ok": True})
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if status == 429:
            self.send_header("Retry-After", str(RETRY_AFTER))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *_: Any) -> None:
        pass


def retries_keep_the_key() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        api = client(f"http://127.0.0.1:{server.server_address[1]}", token="sk_test_x", backoff=0.01)
        answer = api.get_httpx_client().post("/v1/things", json={"name": "a"})
    finally:
        server.shutdown()
    assert answer.status_code == 201, answer.status_code
    keys = {attempt.get("Idempotency-Key") for attempt in Flaky.seen}
    assert len(Flaky.seen) == 4, f"429, 503, a dropped connection, then 201: {len(Flaky.seen)} attempts"
    assert len(keys) == 1, f"one key across the retries, not {keys}"
    assert None not in keys, "a POST gets an Idempotency-Key"
    waited = float(Flaky.seen[1]["at"]) - float(Flaky.seen[0]["at"])
    assert waited >= RETRY_AFTER * 0.9, f"Retry-After: {RETRY_AFTER} honoured, waited {waited:.2f} s"

    Flaky.SCRIPT, Flaky.seen = [429, 429], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        capped = client(f"http://127.0.0.1:{server.server_address[1]}", token="sk_test_x", retries=1, max_wait=0.01)
        problem = raised(lambda: capped.get_httpx_client().post("/v1/things", json={}))
    finally:
        server.shutdown()
    assert (problem.status, problem.code, len(Flaky.seen)) == (429, "rate_limited", 2), "one retry, then raised"


def raised(call: Callable[[], object]) -> ProblemError:
    """The problem `call` raises (it must raise one)."""
    try:
        call()
    except ProblemError as problem:
        return problem
    raise AssertionError("no problem raised")


def live(base_url: str, demo: dict[str, Any]) -> None:
    servers = httpx.get(f"{base_url}/openapi.json").json()["servers"]
    api = client(servers[1]["url"], token=demo["tokens"]["test"])
    problem = raised(lambda: wtta_lookup.sync(client=api, kvk="12345678"))
    assert problem.status == 404
    assert problem.code == "not_in_cache"
    assert problem.detail
    assert str(problem.request_id).startswith("req_")

    whole = classification_list.sync(client=api, limit=100)
    assert isinstance(whole, ClassificationList)
    expected = [item.id for item in whole.data]
    assert len(expected) >= 3, "smoke.py classified several engagements"
    assert [item.id for item in paginate(classification_list.sync, client=api, limit=1)] == expected

    async def every_event() -> list[Any]:
        return [event.id async for event in apaginate(event_list.asyncio, client=api, limit=2)]

    events = event_list.sync(client=api, limit=100)
    assert isinstance(events, EventList)
    assert asyncio.run(every_event()) == [event.id for event in events.data]


if __name__ == "__main__":
    retries_keep_the_key()
    live(sys.argv[1], json.loads(Path(sys.argv[2]).read_text()))
    print("python sdk: retries, Idempotency-Key, problems and paging ok")
