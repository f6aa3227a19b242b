"""Sending a batch over HTTP: 429s waited out for their Retry-After, transient failures retried with backoff under the
same Idempotency-Key, anything else stopping the run. The answers come from an httpx MockTransport (what the API
answers is tested against a real server in tests/cli/test_classify_bulk.py); the waits are recorded, not slept."""

from __future__ import annotations

import io
import socket
from collections.abc import Iterator

import httpx
import pytest

from compliance_api.cli.bulk.over_http import HttpSender, Retries, client
from compliance_api.cli.bulk.rows import Batch, batches, read_rows
from compliance_api.cli.bulk.runner import BulkAnswer, SendFailed

TOKEN = "sk_live_" + "x" * 38
BATCH: Batch = batches(read_rows(io.BytesIO(b"reference,own_tools\na,yes\nb,no\n"), None)[1], 100, "")[0]
VERDICTS = {"data": [{"id": "1", "verdict": "risky", "score": 40}, {"id": "2", "verdict": "risky", "score": 50}]}

Step = httpx.Response | Exception


def _problem(status: int, code: str, headers: dict[str, str] | None = None) -> httpx.Response:
    """A problem answer; header values travel as Latin-1 bytes, as on the wire (so "²" can be sent)."""
    body = {"type": "about:blank", "title": code, "status": status, "code": code, "detail": f"{code} detail"}
    raw = [(name.encode(), value.encode("latin-1")) for name, value in (headers or {}).items()]
    return httpx.Response(status, json=body, headers=[(b"Content-Type", b"application/problem+json"), *raw])


class Script:
    """Answers requests with `steps` in turn, keeping each request."""

    def __init__(self, *steps: Step) -> None:
        self.steps: Iterator[Step] = iter(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = next(self.steps)
        if isinstance(step, Exception):
            raise step
        return step


async def _send(script: Script, attempts: int = 5) -> tuple[list[float], list[str], BulkAnswer]:
    waits: list[float] = []
    told: list[str] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    retries = Retries(attempts=attempts, sleep=sleep, tell=told.append)
    async with client("https://api.example.com/prefix", TOKEN, 5, httpx.MockTransport(script)) as http:
        answer = await HttpSender(http, retries).send(BATCH)
    return waits, told, answer


async def test_a_429_waits_its_retry_after_and_does_not_count_as_a_failure() -> None:
    limited = _problem(429, "rate_limited", {"Retry-After": "7"})
    script = Script(limited, limited, limited, httpx.Response(200, json=VERDICTS))
    waits, told, answer = await _send(script, attempts=0)
    assert waits == [7, 7, 7]
    assert told[0] == "lines 2–3: 429 rate_limited; retrying in 7 s"
    assert [item["id"] for item in answer.items] == ["1", "2"]


@pytest.mark.parametrize("value", ["²", "soon", "-5", ""])
async def test_a_429_whose_retry_after_cannot_be_read_backs_off_instead(value: str) -> None:
    """A Retry-After that is not whole seconds or a date (a superscript digit is a digit to `str.isdigit`) is
    treated as absent: the batch backs off and is sent again, instead of the run ending in a traceback."""
    script = Script(_problem(429, "rate_limited", {"Retry-After": value}), httpx.Response(200, json=VERDICTS))
    waits, _, answer = await _send(script, attempts=0)
    assert len(waits) == 1
    assert 0.5 <= waits[0] <= 1
    assert [item["id"] for item in answer.items] == ["1", "2"]


async def test_transient_failures_are_retried_with_growing_waits_under_the_same_key() -> None:
    script = Script(
        httpx.ConnectError("refused"),
        _problem(503, "service_unavailable"),
        httpx.ReadTimeout("slow"),
        _problem(409, "idempotency_in_progress"),
        httpx.Response(200, json=VERDICTS, headers={"Idempotent-Replayed": "true"}),
    )
    waits, told, answer = await _send(script)
    assert len(waits) == 4
    for failures, wait in enumerate(waits, start=1):  # 1 s doubling, each shortened by up to half (jitter)
        assert 2 ** (failures - 2) <= wait <= 2 ** (failures - 1)
    assert [message.split(": ", 1)[1].split(";")[0] for message in told] == [
        "ConnectError: refused",
        "503 service_unavailable",
        "ReadTimeout: slow",
        "409 idempotency_in_progress",
    ]
    assert answer.replayed
    assert {request.headers["Idempotency-Key"] for request in script.requests} == {BATCH.key}
    assert {str(request.url) for request in script.requests} == {
        "https://api.example.com/prefix/v1/classify/zelfstandigenwet/batch"
    }
    assert all(request.headers["Authorization"] == f"Bearer {TOKEN}" for request in script.requests)


async def test_a_batch_still_failing_after_its_retries_stops_the_run() -> None:
    script = Script(*[_problem(502, "error")] * 3)
    with pytest.raises(SendFailed, match=r"lines 2–3: 502 error \(still after 2 retries\)"):
        await _send(script, attempts=2)
    assert len(script.requests) == 3


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (_problem(401, "invalid_token"), "lines 2–3: the API answered 401 invalid_token: invalid_token detail"),
        (_problem(409, "idempotency_mismatch"), "the API answered 409 idempotency_mismatch"),
        (_problem(400, "validation_failed"), "the API answered 400 validation_failed"),
        (httpx.Response(404, text="<html>not here</html>"), "the API answered 404 error: Not Found"),
        (httpx.Response(200, json={"data": "?"}), "lines 2–3: the answer is not a batch result"),
    ],
)
async def test_any_other_answer_stops_the_run_at_once(answer: httpx.Response, message: str) -> None:
    script = Script(answer)
    with pytest.raises(SendFailed, match=message):
        await _send(script)
    assert len(script.requests) == 1


async def test_a_host_that_does_not_resolve_stops_at_once_without_resume_advice() -> None:
    unresolved = httpx.ConnectError("[Errno -2] Name or service not known")
    unresolved.__cause__ = socket.gaierror(-2, "Name or service not known")
    script = Script(unresolved)
    with pytest.raises(SendFailed) as failed:
        await _send(script)
    assert len(script.requests) == 1  # no retry
    assert str(failed.value).startswith("cannot resolve 'api.example.com', the host of --base-url")
    assert not failed.value.resumable


@pytest.mark.parametrize("status", [401, 403, 404])
async def test_a_refusal_is_not_worth_resuming(status: int) -> None:
    with pytest.raises(SendFailed) as failed:
        await _send(Script(_problem(status, "refused")))
    assert not failed.value.resumable


async def test_a_batch_out_of_retries_is_worth_resuming() -> None:
    with pytest.raises(SendFailed) as failed:
        await _send(Script(_problem(503, "service_unavailable")), attempts=0)
    assert failed.value.resumable
