"""Storage cannot be inflated cheaply: a stored verdict is the answer's bytes compressed with the packaged dictionary
(under 1 kB, given back byte for byte), and an Idempotency-Key record of a classify answer keeps references to the
stored verdicts, not a second copy, while its replay answers the same bytes."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
import pytest
import zstandard
from httpx import AsyncClient
from sqlalchemy import LargeBinary, func, select, type_coerce
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify.answers import MissingVerdict, VerdictReferences
from compliance_api.classify.compression import (
    CURRENT_DICTIONARY,
    DICTIONARIES,
    UnknownDictionary,
    decompress,
    dictionary_of,
)
from compliance_api.classify.models import Classification
from compliance_api.idempotency.models import IdempotencyRecord
from compliance_api.kit.environment import Environment
from tests.classify.conftest import Account, caller_for, make_account
from tests.conftest import commits

Maker = async_sessionmaker[AsyncSession]
ZW = "/v1/classify/zelfstandigenwet"
CB = "/v1/classify/cross-border"
ENGAGEMENT = {"hourly_rate_eur": 95, "months_duration": 12, "own_tools": True, "can_delegate": False}
METADATA = {"team": "payroll", "cost_centre": "4711"}


@pytest.fixture
async def account(sessionmaker: Maker, pepper: bytes) -> Account:
    return await make_account(sessionmaker, pepper)


async def _stored(sessionmaker: Maker, id: str) -> bytes:
    """The bytes the classification row holds, as they are on disk."""
    async with sessionmaker() as session:
        stored = await session.scalar(
            select(type_coerce(Classification.result, LargeBinary)).where(Classification.id == uuid.UUID(id))
        )
    assert isinstance(stored, bytes)
    return stored


async def _record_bytes(sessionmaker: Maker) -> int:
    async with sessionmaker() as session:
        return int(await session.scalar(select(func.sum(func.length(IdempotencyRecord.response_body)))) or 0)


@pytest.mark.parametrize(
    ("path", "body", "language"),
    [
        (ZW, {"engagement": ENGAGEMENT, "reference": "c-1", "metadata": METADATA}, "en"),
        (ZW, {"engagement": {}}, "nl"),
        (CB, {"country": "DE", "criteria": {"subject_to_instructions": True}}, "de"),
        (CB, {"country": "FR", "criteria": {}, "monitor": True}, "fr"),
        (CB, {"country": "BE", "criteria": {"no_financial_risk": False}}, "en"),
    ],
)
async def test_a_stored_verdict_is_compact_and_gives_back_the_answer_byte_for_byte(
    client: AsyncClient, sessionmaker: Maker, account: Account, path: str, body: dict[str, Any], language: str
) -> None:
    answer = await client.post(path, json=body, headers={**account.live, "Accept-Language": language})
    assert answer.status_code == 200
    stored = await _stored(sessionmaker, answer.json()["id"])
    assert decompress(stored) == answer.content
    assert dictionary_of(stored) == CURRENT_DICTIONARY, "the row names its dictionary"
    assert len(stored) < 1000 < len(answer.content)
    record = await client.get(f"/v1/classifications/{answer.json()['id']}", headers=account.live)
    assert record.json()["result"] == answer.json()


async def test_every_verdict_of_a_batch_is_stored_as_its_item_bytes(
    client: AsyncClient, sessionmaker: Maker, account: Account
) -> None:
    items = [{"engagement": {"hourly_rate_eur": 20 + n}} for n in range(50)]
    answer = await client.post(f"{ZW}/batch", json={"items": items}, headers=account.live)
    assert answer.status_code == 200
    sizes = []
    for item in answer.json()["data"]:
        stored = await _stored(sessionmaker, item["id"])
        assert decompress(stored) == orjson.dumps(item)
        sizes.append(len(stored))
    assert sum(sizes) / len(sizes) < 1000


@pytest.mark.parametrize("path", [f"{ZW}/batch", f"{CB}/batch"])
async def test_a_keyed_batch_record_refers_to_the_verdicts_and_its_replay_is_byte_for_byte(
    client: AsyncClient, sessionmaker: Maker, account: Account, path: str
) -> None:
    good = {"engagement": ENGAGEMENT} if path.startswith(ZW) else {"country": "BE", "criteria": {}}
    bad = {"engagement": {"days_per_week": 9}} if path.startswith(ZW) else {"country": "DE", "criteria": {"x": True}}
    items = [good, bad, {**good, "reference": "r-3", "metadata": METADATA}] * 100
    headers = {**account.live, "Idempotency-Key": f"batch-{uuid.uuid4()}", "Accept-Language": "fr"}

    first = await client.post(path, json={"items": items}, headers=headers)
    assert first.status_code == 200
    assert [("index" in item) for item in first.json()["data"][:3]] == [False, True, False]
    kept = await _record_bytes(sessionmaker)
    assert kept <= len(first.content) / 10, (kept, len(first.content))

    replay = await client.post(path, json={"items": items}, headers=headers)
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.content == first.content
    assert replay.headers["content-language"] == "fr"


async def test_a_keyed_single_answer_is_replayed_byte_for_byte_from_the_stored_verdict(
    client: AsyncClient, sessionmaker: Maker, account: Account
) -> None:
    headers = {**account.live, "Idempotency-Key": "single-1"}
    first = await client.post(ZW, json={"engagement": ENGAGEMENT}, headers=headers)
    assert await _record_bytes(sessionmaker) < 200
    replay = await client.post(ZW, json={"engagement": ENGAGEMENT}, headers=headers)
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.content == first.content


async def test_a_replay_reads_only_the_callers_own_verdicts(
    client: AsyncClient, sessionmaker: Maker, pepper: bytes, account: Account
) -> None:
    """The record names verdict ids; the replay reads them only within the caller's account and environment, so the
    sandbox with the same key is another record, never a way to read production's verdicts."""
    key = {"Idempotency-Key": "shared-key"}
    live = await client.post(ZW, json={"engagement": ENGAGEMENT}, headers={**account.live, **key})
    sandbox = await client.post(
        ZW, json={"engagement": ENGAGEMENT}, headers={**account.test, **key, "Host": "sandbox.localhost"}
    )
    assert sandbox.status_code == 200
    assert "idempotent-replayed" not in sandbox.headers
    assert sandbox.json()["id"] != live.json()["id"]


@commits  # the verdict is made through the app, and read back through the test's own session
@pytest.mark.parametrize("reader", ["another account", "the other environment"])
async def test_a_record_naming_a_verdict_that_is_not_the_callers_expands_to_nothing(
    client: AsyncClient, sessionmaker: Maker, pepper: bytes, account: Account, reader: str
) -> None:
    """The verdicts are read by primary key; one of another account or environment is missing to this caller, as
    if it were gone, never answered."""
    made = (await client.post(ZW, json={"engagement": ENGAGEMENT}, headers=account.live)).json()
    compact = orjson.dumps({"verdict": made["id"]})  # what `compact` keeps of a verdict
    other = (await make_account(sessionmaker, pepper)).user if reader == "another account" else account.user
    environment = Environment.live if reader == "another account" else Environment.test
    async with sessionmaker() as session:
        assert await VerdictReferences().expand(session, caller_for(account.user, Environment.live), compact)
        with pytest.raises(MissingVerdict):
            await VerdictReferences().expand(session, caller_for(other, environment), compact)


@pytest.mark.parametrize("dict_id", sorted(int(p.stem.split("-")[1]) for p in DICTIONARIES.glob("verdicts-*.zdict")))
def test_a_value_compressed_with_any_packaged_dictionary_still_reads(dict_id: int) -> None:
    """Rows keep the dictionary they were written with: every packaged one, not only the current, decompresses."""
    raw = orjson.dumps({"verdict": "safe", "advice": f"A verdict stored under dictionary {dict_id}."})
    dictionary = zstandard.ZstdCompressionDict((DICTIONARIES / f"verdicts-{dict_id}.zdict").read_bytes())
    stored = zstandard.ZstdCompressor(dict_data=dictionary).compress(raw)
    assert dictionary_of(stored) == dict_id
    assert decompress(stored) == raw


def test_a_value_naming_a_dictionary_not_packaged_is_refused_by_name() -> None:
    packaged = (DICTIONARIES / f"verdicts-{CURRENT_DICTIONARY}.zdict").read_bytes()
    unknown = packaged[:4] + (999_999).to_bytes(4, "little") + packaged[8:]  # zstd's header: magic, then Dict_ID
    stored = zstandard.ZstdCompressor(dict_data=zstandard.ZstdCompressionDict(unknown)).compress(b"{}")
    assert dictionary_of(stored) == 999_999
    with pytest.raises(UnknownDictionary, match="999999"):
        decompress(stored)
