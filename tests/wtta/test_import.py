from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.events import service as events
from compliance_api.events.models import OutboxEvent
from compliance_api.kit.environment import Environment
from compliance_api.wtta import service
from compliance_api.wtta.models import AdmissionStatus, WttaAdmission, WttaStatusChange
from compliance_api.wtta.reader import lookup_reader_for
from compliance_api.wtta.register_file import RegisterFileError
from compliance_api.wtta.register_import import ADMISSION_UPDATED, EmptySnapshot
from compliance_api.wtta.schemas import WttaAdmissionOut
from tests.conftest import commits
from tests.wtta.registers import import_lines, row

pytestmark = (
    commits  # the import stages rows in a temporary table that lives until its transaction ends, so these tests commit
)

Maker = async_sessionmaker[AsyncSession]


async def cached(sessionmaker: Maker, kvk: str, environment: Environment = Environment.live) -> WttaAdmissionOut | None:
    async with sessionmaker() as session:
        row = await service.lookup(session, environment=environment, kvk_number=kvk)
    return WttaAdmissionOut.model_validate({**row, "livemode": environment is Environment.live}) if row else None


async def snapshot(sessionmaker: Maker) -> list[tuple[object, ...]]:
    """Every admission, history and outbox row (what an import may change)."""
    async with sessionmaker() as session:
        admissions = (await session.execute(select(WttaAdmission).order_by(WttaAdmission.kvk_number))).scalars()
        changes = await session.scalar(select(func.count()).select_from(WttaStatusChange))
        outbox = await session.scalar(select(func.count()).select_from(OutboxEvent))
        return [
            *((a.kvk_number, a.admission_status, a.legal_name, a.last_verified_at) for a in admissions),
            (changes, outbox),
        ]


async def test_import_stores_rows_with_source_and_verification_time(sessionmaker: Maker) -> None:
    result = await import_lines(
        sessionmaker,
        [row("12345678"), row("87654321", "applied", number="")],
        source="NAU",
        source_url="https://x.test/r",
    )
    assert (result.rows_read, result.rows_created, result.rows_changed, result.status_changes) == (2, 2, 0, 2)
    admission = await cached(sessionmaker, "12345678")
    assert admission is not None
    assert (admission.admission_status, admission.source, admission.source_url) == (
        AdmissionStatus.admitted,
        "NAU",
        "https://x.test/r",
    )
    assert admission.missing_from_source_at is None


async def test_a_bad_row_anywhere_changes_nothing(sessionmaker: Maker) -> None:
    await import_lines(sessionmaker, [row("12345678")])
    before = await snapshot(sessionmaker)
    lines = [row("12345678", "revoked"), row("11111111"), "22222222,Bad,admitted,,2027-13-01,"]
    with pytest.raises(RegisterFileError, match=r"^line 4, field admitted_at"):
        await import_lines(sessionmaker, lines)
    assert await snapshot(sessionmaker) == before


async def test_a_duplicate_number_is_refused_with_both_lines(sessionmaker: Maker) -> None:
    with pytest.raises(RegisterFileError, match=r"^line 4, field kvk_number: 12345678 already appears on line 2"):
        await import_lines(sessionmaker, [row("12345678"), row("11111111"), row("12345678", "revoked")])
    assert await snapshot(sessionmaker) == [(0, 0)]


async def test_importing_the_same_file_twice_changes_only_the_verification_time(sessionmaker: Maker) -> None:
    lines = [row("12345678"), row("87654321", "suspended")]
    await import_lines(sessionmaker, lines)
    first = await snapshot(sessionmaker)
    verified = [await cached(sessionmaker, kvk) for kvk in ("12345678", "87654321")]
    again = await import_lines(sessionmaker, lines)
    assert (again.rows_created, again.rows_changed, again.rows_unchanged, again.status_changes) == (0, 0, 2, 0)
    second = await snapshot(sessionmaker)
    assert [r[:3] for r in second[:-1]] == [r[:3] for r in first[:-1]]
    assert second[-1] == first[-1], "no history, no events"
    for kvk, before in zip(("12345678", "87654321"), verified, strict=True):
        after = await cached(sessionmaker, kvk)
        assert after is not None
        assert before is not None
        assert after.last_verified_at > before.last_verified_at, "verified again"


async def test_last_verified_at_is_the_last_import_that_contained_the_row(sessionmaker: Maker) -> None:
    await import_lines(sessionmaker, [row("11111111"), row("22222222"), row("33333333")])
    covering = await import_lines(sessionmaker, [row("11111111"), row("22222222"), row("33333333", "revoked")])
    partial = await import_lines(sessionmaker, [row("11111111")])
    assert covering.rows_changed == 1
    times = {}
    for kvk in ("11111111", "22222222", "33333333"):
        admission = await cached(sessionmaker, kvk)
        assert admission is not None
        times[kvk] = admission.last_verified_at
    assert times["11111111"] > times["22222222"], "the partial import contained only 11111111"
    assert times["22222222"] == times["33333333"], "both verified by the covering import"
    assert partial.import_id != covering.import_id


async def test_status_changes_are_kept_and_emitted_in_the_outbox(sessionmaker: Maker) -> None:
    await import_lines(sessionmaker, [row("12345678"), row("87654321")], source="first")
    result = await import_lines(
        sessionmaker, [row("12345678", "suspended"), row("87654321", name="Renamed B.V.")], source="second"
    )
    assert (result.rows_changed, result.status_changes) == (2, 1)
    async with sessionmaker() as session:
        changes = await service.history(session, environment=Environment.live, kvk_number="12345678")
        pending = await events.pending(session, environment=Environment.live, type=ADMISSION_UPDATED)
    assert [(c.from_status, c.to_status, c.source) for c in changes] == [
        (None, AdmissionStatus.admitted, "first"),
        (AdmissionStatus.admitted, AdmissionStatus.suspended, "second"),
    ]
    assert [e.payload for e in pending] == [
        {
            "kvk_number": "12345678",
            "legal_name": "Acme B.V.",
            "from_status": "admitted",
            "to_status": "suspended",
            "changed_at": changes[1].changed_at.isoformat(),
            "source": "second",
        }
    ]


async def test_a_failed_import_leaves_no_event(sessionmaker: Maker) -> None:
    await import_lines(sessionmaker, [row("12345678")])
    with pytest.raises(RegisterFileError):
        await import_lines(sessionmaker, [row("12345678", "revoked"), "bad"])
    async with sessionmaker() as session:
        assert await events.pending(session, environment=Environment.live) == []


async def test_full_import_marks_absent_numbers_missing_and_keeps_them(sessionmaker: Maker) -> None:
    await import_lines(sessionmaker, [row("12345678"), row("87654321", "revoked")])
    partial = await import_lines(sessionmaker, [row("12345678")])
    assert partial.rows_missing == 0, "only a --full import speaks for absent numbers"
    full = await import_lines(sessionmaker, [row("12345678")], full=True)
    assert full.rows_missing == 1
    gone = await cached(sessionmaker, "87654321")
    assert gone is not None
    assert gone.admission_status is AdmissionStatus.revoked
    assert gone.missing_from_source_at is not None
    assert (await import_lines(sessionmaker, [row("12345678")], full=True)).rows_missing == 0, "marked once"
    await import_lines(sessionmaker, [row("87654321", "revoked")])
    back = await cached(sessionmaker, "87654321")
    assert back is not None
    assert back.missing_from_source_at is None, "listed again: no longer missing"


async def test_an_empty_full_snapshot_is_refused(sessionmaker: Maker) -> None:
    await import_lines(sessionmaker, [row("12345678")])
    with pytest.raises(EmptySnapshot):
        await import_lines(sessionmaker, [], full=True)
    admission = await cached(sessionmaker, "12345678")
    assert admission is not None
    assert admission.missing_from_source_at is None


async def test_environments_are_separate_caches(sessionmaker: Maker) -> None:
    await import_lines(sessionmaker, [row("12345678", "revoked")], environment=Environment.test)
    await import_lines(sessionmaker, [row("87654321")], environment=Environment.live, full=True)
    assert await cached(sessionmaker, "12345678", Environment.live) is None
    sandbox = await cached(sessionmaker, "12345678", Environment.test)
    assert sandbox is not None
    assert sandbox.missing_from_source_at is None, "a live --full import does not touch the sandbox"
    await import_lines(sessionmaker, [row("12345678", "admitted")], environment=Environment.live)
    async with sessionmaker() as session:
        assert await events.pending(session, environment=Environment.live) == [], "new in live: not an update"
        test_history = await service.history(session, environment=Environment.test, kvk_number="12345678")
    assert [c.to_status for c in test_history] == [AdmissionStatus.revoked]


@commits
async def test_the_lookup_reader_reads_what_the_session_reads(sessionmaker: Maker, settings: Settings) -> None:
    """The endpoint reads through its own reader (SQLite: read-only connection; PostgreSQL: asyncpg pool)."""
    await import_lines(sessionmaker, [row("11111111"), row("22222222", "revoked")])
    await import_lines(sessionmaker, [row("11111111"), row("22222222", "revoked")])
    await import_lines(sessionmaker, [row("22222222", "suspended")], environment=Environment.test)
    reader = lookup_reader_for(settings.resolved_database_url, postgres_pool_size=2)
    assert reader is not None
    try:
        for environment, kvk in (
            (Environment.live, "11111111"),
            (Environment.live, "22222222"),
            (Environment.test, "22222222"),
        ):
            async with sessionmaker() as session:
                expected = await service.lookup(session, environment=environment, kvk_number=kvk)
            assert expected is not None
            assert await reader.lookup(environment, kvk) == expected
        assert await reader.lookup(Environment.test, "11111111") is None
    finally:
        await reader.close()
