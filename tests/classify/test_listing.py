"""`GET /v1/classifications`: own classifications only, filtered, newest first, keyset pages."""

from __future__ import annotations

from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from tests.classify.conftest import Account, make_account
from tests.classify.test_rescore import THE_37_EURO_CASE, TODAY, _rescore
from tests.conftest import executed_statements

ZW = "/v1/classify/zelfstandigenwet"
CB = "/v1/classify/cross-border"
LIST = "/v1/classifications"


async def _make(client: AsyncClient, account: Account, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = await client.post(path, json=body, headers=account.live)
    assert answer.status_code == 200, answer.text
    made: dict[str, Any] = answer.json()
    return made


async def _all_pages(client: AsyncClient, account: Account, **params: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {**params, **({"cursor": cursor} if cursor else {})}
        page = await client.get(LIST, params=query, headers=account.live)
        assert page.status_code == 200, page.text
        body = page.json()
        items += body["data"]
        assert body["has_more"] == (body["next_cursor"] is not None)
        if not body["has_more"]:
            return items
        cursor = body["next_cursor"]


async def test_pages_are_newest_first_and_stable_under_concurrent_inserts(
    client: AsyncClient, account: Account
) -> None:
    made = [await _make(client, account, ZW, {"engagement": {}, "reference": f"r{i}"}) for i in range(5)]
    first = (await client.get(LIST, params={"limit": 2}, headers=account.live)).json()
    assert [item["reference"] for item in first["data"]] == ["r4", "r3"]
    await _make(client, account, ZW, {"engagement": {}, "reference": "late"})
    rest = await _all_pages(client, account, limit=2, cursor=first["next_cursor"])
    assert [item["reference"] for item in rest] == ["r2", "r1", "r0"]
    everything = await _all_pages(client, account, limit=100)
    assert [item["reference"] for item in everything] == ["late", "r4", "r3", "r2", "r1", "r0"]
    assert {item["id"] for item in everything} >= {item["id"] for item in made}
    assert everything[0]["reference"] == "late"


async def test_filters(client: AsyncClient, account: Account, cli_env: dict[str, str]) -> None:
    await _make(client, account, ZW, THE_37_EURO_CASE)
    await _make(client, account, ZW, {"engagement": {}, "reference": "plain"})
    await _make(client, account, CB, {"country": "DE", "criteria": {}, "reference": "de"})
    await _make(client, account, CB, {"country": "FR", "criteria": {}, "reference": "fr", "monitor": True})
    await _rescore(cli_env, "--as-of", TODAY.isoformat())

    async def refs(**params: Any) -> list[str]:
        return [item["reference"] for item in await _all_pages(client, account, **params)]

    assert await refs(reference="de") == ["de"]
    assert await refs(kind="cross_border") == ["fr", "de"]
    assert await refs(kind="cross_border", country="FR") == ["fr"]
    assert await refs(monitored="true") == ["fr", "contract-37"]
    assert await refs(monitored="false") == ["de", "plain"]
    [changed] = await _all_pages(client, account, reference="contract-37")
    assert (changed["original_verdict"], changed["verdict"]) == ("safe", "risky")
    assert await refs(verdict="safe") == []
    assert "contract-37" in await refs(verdict="risky")
    everything = await _all_pages(client, account)
    middle = everything[1]["created_at"]
    assert await refs(created_before=middle) == [item["reference"] for item in everything[2:]]
    assert await refs(created_after=middle) == [everything[0]["reference"]]


async def test_another_account_and_the_other_environment_see_none(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    account: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
) -> None:
    await _make(client, account, ZW, {"engagement": {}})
    stranger = await make_account(sessionmaker, pepper)
    assert (await client.get(LIST, headers=stranger.live)).json()["data"] == []
    assert (await sandbox_client.get(LIST, headers=account.test)).json()["data"] == []
    assert len((await client.get(LIST, headers=account.live)).json()["data"]) == 1


async def test_a_foreign_or_malformed_cursor_is_400(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    account: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
) -> None:
    for _ in range(2):
        await _make(client, account, ZW, {"engagement": {}})
    cursor = (await client.get(LIST, params={"limit": 1}, headers=account.live)).json()["next_cursor"]
    stranger = await make_account(sessionmaker, pepper)
    attempts = [
        (client, stranger.live, cursor),
        (sandbox_client, account.test, cursor),
        (client, account.live, "not-a-cursor"),
        (client, account.live, cursor[:-4]),
    ]
    for http, headers, value in attempts:
        answer = await http.get(LIST, params={"cursor": value}, headers=headers)
        assert answer.status_code == 400, value
        assert answer.json()["code"] == "validation_failed"
        assert answer.json()["errors"][0]["field"] == "query.cursor"


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 101},
        {"limit": "ten"},
        {"verdict": "maybe"},
        {"kind": "dutch"},
        {"country": "NL"},
        {"monitored": "perhaps"},
        {"created_after": "2026-11-25T06:00:00"},
        {"created_before": "yesterday"},
        {"created_before": "0.5"},
        {"created_after": "2026-11-25"},
        {"reference": "x" * 201},
    ],
)
async def test_bad_query_parameters_are_400(client: AsyncClient, account: Account, params: dict[str, Any]) -> None:
    answer = await client.get(LIST, params=params, headers=account.live)
    assert answer.status_code == 400
    assert answer.json()["code"] == "validation_failed"


async def test_a_page_reads_no_stored_verdict_and_commits_nothing(
    client: AsyncClient, account: Account, engine: AsyncEngine
) -> None:
    """The list's items come from columns: its one statement selects neither the stored verdict nor the request
    (zstd frames, each decompressed and parsed if read), and a read commits nothing."""
    made = await _make(client, account, CB, {"country": "DE", "criteria": {}, "reference": "de"})
    commits: list[object] = []

    def committed(connection: object) -> None:
        commits.append(connection)

    event.listen(type(engine.sync_engine), "commit", committed)
    try:
        with executed_statements(engine, "FROM classification") as statements:
            page = await client.get(LIST, headers=account.live)
    finally:
        event.remove(type(engine.sync_engine), "commit", committed)
    assert page.status_code == 200, page.text
    assert commits == []
    [statement] = statements
    assert "classification.result" not in statement
    assert "classification.request" not in statement
    [item] = page.json()["data"]
    assert item["ruleset"] == made["ruleset"]
    assert (item["verdict"], item["original_verdict"], item["country"]) == (made["verdict"], made["verdict"], "DE")
