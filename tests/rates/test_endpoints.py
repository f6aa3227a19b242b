from __future__ import annotations

import asyncio
from typing import Annotated

import numpy as np
import pytest
from fastapi import APIRouter, FastAPI, Query
from fastapi.routing import APIRoute
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.kit.environment import Environment
from compliance_api.rates.cache import BenchmarkCache, Entry
from compliance_api.rates.catalogue import NATIONAL
from compliance_api.rates.dependencies import BENCHMARKS
from compliance_api.rates.endpoints import REGION_PATTERN
from compliance_api.rates.endpoints import router as rates_router
from compliance_api.wtta.endpoints import router as wtta_router
from tests.factories import bearer, create_token
from tests.rates.helpers import AS_OF, observations, seed

UTRECHT = list(range(6000, 12000, 400))  # 15 observations
HOLLAND = [7000, 7000, 7000, 8000, 9500]  # 5: below the minimum of 10 alone, but part of NL


@pytest.fixture
async def token(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> str:
    await seed(sessionmaker, observations("ict", "NL-UT", UTRECHT) + observations("ict", "NL-NH", HOLLAND))
    return (await create_token(sessionmaker, pepper))[1]


async def test_benchmark_defaults_to_the_national_aggregate(client: AsyncClient, token: str) -> None:
    response = await client.get("/v1/rates/benchmark", params={"sector": "ict"}, headers=bearer(token))
    assert response.status_code == 200
    body = response.json()
    values = [c / 100 for c in UTRECHT + HOLLAND]
    p25, p50, p75 = (round(float(v), 2) for v in np.percentile(values, [25, 50, 75]))
    assert body == {
        "livemode": True,
        "sector": "ict",
        "region": "NL",
        "p25_eur": p25,
        "p50_eur": p50,
        "p75_eur": p75,
        "sample_size": 20,
        "as_of": AS_OF.isoformat(),
        "currency": "EUR",
        "vat": "excluded",
        "window_months": 24,
        "synthetic": False,
        "source": body["source"],
    }
    assert "20 imported observations dated 2024-07-01 to 2026-06-30" in body["source"]


async def test_benchmark_of_a_province(client: AsyncClient, token: str) -> None:
    response = await client.get(
        "/v1/rates/benchmark", params={"sector": "ict", "region": "NL-UT"}, headers=bearer(token)
    )
    assert response.status_code == 200
    assert (response.json()["sample_size"], response.json()["p50_eur"]) == (15, 88.0)


@pytest.mark.parametrize(
    ("params", "status", "code"),
    [
        ({"sector": "ict", "region": "NL-NH"}, 404, "insufficient_data"),
        ({"sector": "legal"}, 404, "insufficient_data"),
        ({"sector": "astrology"}, 404, "unknown_sector"),
        ({}, 400, "validation_failed"),
        ({"sector": ""}, 400, "validation_failed"),
        ({"sector": "ict", "region": "NL-XX"}, 400, "validation_failed"),
        ({"sector": "ict", "region": "nl"}, 400, "validation_failed"),
        ({"sector": "ict", "region": "DE-BY-XYZ"}, 400, "validation_failed"),
    ],
)
async def test_benchmark_refusals(
    client: AsyncClient, token: str, params: dict[str, str], status: int, code: str
) -> None:
    response = await client.get("/v1/rates/benchmark", params=params, headers=bearer(token))
    assert (response.status_code, response.json()["code"]) == (status, code)
    assert response.headers["content-type"] == "application/problem+json"


async def test_insufficient_data_says_how_many(client: AsyncClient, token: str) -> None:
    response = await client.get(
        "/v1/rates/benchmark", params={"sector": "ict", "region": "NL-NH"}, headers=bearer(token)
    )
    assert "5 observations" in response.json()["detail"]


async def test_sandbox_never_sees_production_observations(
    sandbox_client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, token: str
) -> None:
    _, test_token = await create_token(sessionmaker, pepper, environment=Environment.test)
    response = await sandbox_client.get("/v1/rates/benchmark", params={"sector": "ict"}, headers=bearer(test_token))
    assert (response.status_code, response.json()["code"]) == (404, "insufficient_data")


async def test_each_environment_answers_from_its_own_observations(
    client: AsyncClient, sandbox_client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    await seed(sessionmaker, observations("ict", "NL-UT", [4000] * 12), environment=Environment.test, synthetic=True)
    await seed(sessionmaker, observations("ict", "NL-UT", [9000] * 12))
    _, test_token = await create_token(sessionmaker, pepper, environment=Environment.test)
    _, live_token = await create_token(sessionmaker, pepper)
    sandbox = (await sandbox_client.get("/v1/rates/benchmark?sector=ict", headers=bearer(test_token))).json()
    live = (await client.get("/v1/rates/benchmark?sector=ict", headers=bearer(live_token))).json()
    assert (sandbox["p50_eur"], sandbox["synthetic"], live["p50_eur"], live["synthetic"]) == (40.0, True, 90.0, False)
    assert "synthetic" in sandbox["source"]


async def test_an_import_is_answered_within_the_cache_ttl(
    app: FastAPI, client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], token: str
) -> None:
    now = [0.0]
    app.state.registry.put(BENCHMARKS, BenchmarkCache(4.0, clock=lambda: now[0]))
    url = "/v1/rates/benchmark?sector=legal"
    assert (await client.get(url, headers=bearer(token))).status_code == 404
    await seed(sessionmaker, observations("legal", "NL-ZH", [15000] * 10))
    assert (await client.get(url, headers=bearer(token))).status_code == 404, "still the cached answer"
    now[0] = 4.0
    response = await client.get(url, headers=bearer(token))
    assert (response.status_code, response.json()["p50_eur"]) == (200, 150.0)


def test_a_zero_ttl_cache_keeps_nothing() -> None:
    cache = BenchmarkCache(0)
    key = (Environment.live, "ict", "NL")
    assert cache.put(key, Entry(None, 3)) == Entry(None, 3)
    assert cache.get(key) is None


async def test_sectors_list_the_publishable_regions(client: AsyncClient, token: str) -> None:
    response = await client.get("/v1/rates/sectors", headers=bearer(token))
    assert response.status_code == 200
    body = response.json()
    by_slug = {s["sector"]: s for s in body["sectors"]}
    assert by_slug["ict"]["regions"] == ["NL", "NL-UT"]
    assert by_slug["legal"]["regions"] == []
    assert body["min_sample"] == 10
    assert len(body["regions"]) == 13


async def test_rates_need_a_token(client: AsyncClient) -> None:
    response = await client.get("/v1/rates/sectors")
    assert response.status_code == 401


async def test_concurrent_misses_share_one_read() -> None:
    cache = BenchmarkCache(4.0)
    key = (Environment.live, "ict", "NL")
    reads = 0

    async def load() -> Entry:
        nonlocal reads
        reads += 1
        await asyncio.sleep(0)
        return Entry(None, 7)

    results = await asyncio.gather(*(cache.get_or_load(key, load) for _ in range(20)))
    assert (reads, results) == (1, [Entry(None, 7)] * 20)
    assert await cache.get_or_load(key, load) == Entry(None, 7)
    assert reads == 1


async def test_an_entry_past_half_its_life_is_answered_at_once_and_read_again_in_the_background() -> None:
    now = [0.0]
    cache = BenchmarkCache(4.0, clock=lambda: now[0])
    key = (Environment.live, "ict", "NL")
    release = asyncio.Event()
    reads: list[int] = []

    async def load() -> Entry:
        reads.append(len(reads))
        if len(reads) > 1:
            await release.wait()  # the background read takes its time
        return Entry(None, len(reads))

    assert await cache.get_or_load(key, load) == Entry(None, 1)
    now[0] = 1.9
    assert (await cache.get_or_load(key, load), len(reads)) == (Entry(None, 1), 1), "young: no read"
    now[0] = 2.1
    answers = [await cache.get_or_load(key, load) for _ in range(3)]
    await asyncio.sleep(0)  # the background read starts
    assert (answers, len(reads)) == ([Entry(None, 1)] * 3, 2), "answered from the cache while one read runs"
    assert await cache.get_or_load(key, load) == Entry(None, 1)
    release.set()
    for _ in range(3):
        await asyncio.sleep(0)
    assert len(reads) == 2
    assert cache.get(key) == Entry(None, 2)
    now[0] = 6.0
    assert await cache.get_or_load(key, load) == Entry(None, 2), "the refreshed entry lives from its own read"


async def test_an_expired_entry_is_never_answered_while_its_read_runs() -> None:
    now = [0.0]
    cache = BenchmarkCache(4.0, clock=lambda: now[0])
    key = (Environment.live, "ict", "NL")
    loaded = iter([Entry(None, 1), Entry(None, 2)])

    async def load() -> Entry:
        await asyncio.sleep(0)
        return next(loaded)

    await cache.get_or_load(key, load)
    now[0] = 4.0
    assert await cache.get_or_load(key, load) == Entry(None, 2)


TWIN_PATH = "/v1/rates/benchmark-declared"


def _declared_twin() -> APIRouter:
    """The benchmark's parameters declared as FastAPI `Query` parameters, as the route once declared them."""
    twin = APIRouter()

    @twin.get(TWIN_PATH)
    async def declared(
        sector: Annotated[str, Query(min_length=1, max_length=40)],
        region: Annotated[str, Query(pattern=REGION_PATTERN)] = NATIONAL,
    ) -> dict[str, str]:
        return {"sector": sector, "region": region}

    return twin


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"sector": ""},
        {"sector": "x" * 41},
        {"region": "NL-XX"},
        {"sector": "ict", "region": ""},
        {"sector": "ict", "region": "nl"},
        {"sector": "", "region": "NL-XX"},
    ],
    ids=["none", "empty sector", "long sector", "no sector, bad region", "empty region", "lower case", "both bad"],
)
async def test_bad_parameters_are_refused_as_fastapi_refuses_them(
    app: FastAPI, client: AsyncClient, token: str, params: dict[str, str]
) -> None:
    """The route reads its query itself (the hot path): each refusal is the one FastAPI gives for the declarations."""
    app.include_router(_declared_twin())
    read = await client.get("/v1/rates/benchmark", params=params, headers=bearer(token))
    declared = await client.get(TWIN_PATH, params=params, headers=bearer(token))
    assert read.status_code == declared.status_code == 400
    assert _without_request_id(read.json()) == _without_request_id(declared.json())


def _without_request_id(problem: dict[str, object]) -> dict[str, object]:
    return {name: value for name, value in problem.items() if name != "request_id"}


@pytest.mark.parametrize(("router", "path"), [(rates_router, "/v1/rates/benchmark"), (wtta_router, "/v1/wtta/lookup")])
def test_the_hot_reads_take_no_fastapi_parameters(router: APIRouter, path: str) -> None:
    """The caller and the query are read from the request: FastAPI's parameter layer cost a sixth of the rate."""
    route = next(route for route in router.routes if isinstance(route, APIRoute) and route.path == path)
    assert [parameter.name for parameter in route.dependant.query_params] == []
    assert route.dependant.dependencies == []
