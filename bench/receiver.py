"""A webhook receiver for the delivery benchmarks, served by uvicorn in a process of its own
(`python -m uvicorn receiver:app --app-dir bench`).

`POST /fast/…` answers 204 at once; `POST /slow/…` answers 204 after `RECEIVER_SLOW_SECONDS` (2) seconds, as a slow
integrator's endpoint would. Each arrival is recorded with its path's first segment, the event type and id, and
`arrival - created_at` of the delivered body (the same machine's clock: the first-attempt latency). `GET /stats`
answers what arrived since the previous `GET /stats` and forgets it.
"""

from __future__ import annotations

import asyncio
import os
import time
from datetime import datetime
from typing import Any

import orjson

SLOW_SECONDS = float(os.environ.get("RECEIVER_SLOW_SECONDS", "2"))
Scope = dict[str, Any]
arrivals: list[dict[str, Any]] = []


async def _body(receive: Any) -> bytes:
    body = b""
    while True:
        message: dict[str, Any] = await receive()
        body += bytes(message.get("body", b""))
        if not message.get("more_body"):
            return body


async def _answer(send: Any, status: int, body: bytes = b"") -> None:
    headers = [(b"content-type", b"application/json")] if body else []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(scope: Scope, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = await _body(receive)
    if scope["method"] == "GET":
        taken = list(arrivals)
        arrivals.clear()
        await _answer(send, 200, orjson.dumps(taken))
        return
    arrived = time.time()
    kind = scope["path"].strip("/").split("/", 1)[0]
    event = orjson.loads(body)
    arrivals.append(
        {
            "kind": kind,
            "type": event["type"],
            "id": event["id"],
            "latency": arrived - datetime.fromisoformat(event["created_at"]).timestamp(),
        }
    )
    if kind == "slow":
        await asyncio.sleep(SLOW_SECONDS)
    await _answer(send, 204)
