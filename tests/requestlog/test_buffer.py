"""The buffer between the hot path and the database: bounded, counted when it drops, flushed at shutdown; and what
a record becomes once it is a row."""

from __future__ import annotations

import datetime as dt
import time
import uuid

import orjson
from prometheus_client import REGISTRY
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import Plan, UserKind
from compliance_api.auth.caller import Caller
from compliance_api.db import create_engine
from compliance_api.kit.batch_writer import batch_writer_for
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.ratelimit.tiers import FREE
from compliance_api.requestlog.buffer import Recorded, RequestLogBuffer, plain_path, problem_text, redact
from tests.requestlog.conftest import stored_rows

CALLER = Caller(uuid.uuid4(), uuid.uuid4(), Environment.test, Plan.free, UserKind.business, FREE, "Ab12")


def _recorded(number: int = 0, *, status: int = 200, problem: bytes | None = None) -> Recorded:
    return Recorded(
        finished_at=time.time(),
        caller=CALLER,
        method="GET",
        route="/v1/rates/sectors",
        raw_path="/v1/rates/sectors",
        status=status,
        elapsed=0.0025,
        request_id=f"req-{number}",
        rate_limit_remaining=7,
        problem=problem,
    )


def _dropped(reason: str) -> float:
    return REGISTRY.get_sample_value("compliance_request_log_dropped_total", {"reason": reason}) or 0.0


async def test_a_full_buffer_drops_and_counts_instead_of_waiting(audit: GroupCommit) -> None:
    buffer = RequestLogBuffer(audit, capacity=100, flush_seconds=3600)
    before = _dropped("buffer_full")
    for number in range(130):
        buffer.record(_recorded(number))
    assert len(buffer) == 100
    assert _dropped("buffer_full") - before == 30


async def test_shutdown_writes_what_is_buffered(
    audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    buffer = RequestLogBuffer(audit, capacity=1000, flush_seconds=3600)
    buffer.start()
    for number in range(3):
        buffer.record(_recorded(number))
    await buffer.close()
    rows = await stored_rows(sessionmaker)
    assert sorted(row["request_id"] for row in rows) == ["req-0", "req-1", "req-2"]
    assert {(row["status"], row["latency_us"], row["token_last4"], row["environment"]) for row in rows} == {
        (200, 2500, "Ab12", Environment.test)
    }
    assert len(buffer) == 0


async def test_a_failed_write_is_counted_and_the_buffer_goes_on() -> None:
    unreachable = create_engine("postgresql+asyncpg://postgres@127.0.0.1:1/nothing")
    audit = GroupCommit(batch_writer_for(unreachable))
    buffer = RequestLogBuffer(audit, capacity=1000, flush_seconds=3600)
    before = _dropped("write_failed")
    for number in range(4):
        buffer.record(_recorded(number))
    assert await buffer.flush() == 0
    assert _dropped("write_failed") - before == 4
    buffer.record(_recorded(5))
    assert len(buffer) == 1
    await unreachable.dispose()


def test_a_row_keeps_the_problem_of_an_error_only_redacted_and_never_a_success_body() -> None:
    problem = orjson.dumps({"code": "unknown_sector", "detail": "'sk_test_abcDEF123' is not a sector"})
    row = _recorded(status=404, problem=problem).row()
    assert orjson.loads(row["problem"]) == {"code": "unknown_sector", "detail": "'sk_test_[redacted]' is not a sector"}
    assert row["created_at"] < utcnow() - dt.timedelta(seconds=0.002)
    assert _recorded(status=200, problem=b'{"id": "x"}').row()["problem"] is None
    assert _recorded(status=500, problem=b"not json").row()["problem"] is None
    assert _recorded(status=500, problem=b"{" + b"x" * 9000).row()["problem"] is None


def test_secret_shaped_strings_are_redacted_to_their_prefix() -> None:
    assert redact("run sk_live_AAAA1111 and pst_xyz and whsec_YWJj+/== ok") == (
        "run sk_live_[redacted] and pst_[redacted] and whsec_[redacted] ok"
    )
    assert redact("req_0123abcd") == "req_0123abcd"
    assert problem_text(b'{"errors": [{"field": "body.sk_test_Zz9", "message": "m"}]}') == (
        '{"errors": [{"field": "body.sk_test_[redacted]", "message": "m"}]}'
    )


def test_an_unmatched_path_keeps_only_its_plain_segments() -> None:
    assert plain_path("/v1/wtta/lookups") == "/v1/wtta/lookups"
    assert plain_path("/v1/passports/0b6f4f1e-2a43-4c55-9a0e-2f4f1c3d5e6a") == (
        "/v1/passports/0b6f4f1e-2a43-4c55-9a0e-2f4f1c3d5e6a"
    )
    assert plain_path("/v1/sk_live_abc/x") == "/v1/{…}/x"
    assert plain_path("/v1/Secret/" + "a" * 37) == "/v1/{…}/{…}"
