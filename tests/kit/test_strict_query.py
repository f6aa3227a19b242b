"""Every `/v1` operation refuses a query parameter it does not declare, and one given twice that is not a list: after
authentication, before any lookup."""

from __future__ import annotations

import uuid

import pytest
from httpx import AsyncClient


async def _problem(client: AsyncClient, path: str, auth: dict[str, str]) -> dict[str, object]:
    answer = await client.get(path, headers=auth)
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    problem: dict[str, object] = answer.json()
    assert problem["code"] == "validation_failed"
    return problem


async def test_an_unknown_parameter_of_a_catalogue_is_refused_not_ignored(
    client: AsyncClient, auth: dict[str, str]
) -> None:
    problem = await _problem(client, "/v1/classify/questions?test=NL&lang=fr", auth)
    assert problem["errors"] == [
        {"field": "query.lang", "message": "unknown query parameter `lang`; this operation takes `test`"}
    ]


async def test_a_misspelt_parameter_names_the_nearest_one(client: AsyncClient, auth: dict[str, str]) -> None:
    problem = await _problem(client, "/v1/classify/questions?tset=NL", auth)
    assert problem["detail"] == "unknown query parameter `tset`; did you mean `test`?"


async def test_an_operation_without_parameters_says_so(client: AsyncClient, auth: dict[str, str]) -> None:
    problem = await _problem(client, "/v1/health?verbose=1", auth)
    assert problem["detail"] == "unknown query parameter `verbose`; this operation takes no query parameters"


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/v1/wtta/lookup?kvk=99000003&kvk=99000001", "kvk"),
        ("/v1/classifications?verdict=safe&verdict=risky", "verdict"),
        ("/v1/classifications/0f8fad5b-d9cb-469f-a165-70867728950e/dossier?format=pdf&format=json", "format"),
    ],
)
async def test_a_parameter_given_twice_is_refused(
    client: AsyncClient, auth: dict[str, str], path: str, name: str
) -> None:
    problem = await _problem(client, path, auth)
    assert problem["errors"] == [{"field": f"query.{name}", "message": "given 2 times; give it once"}]


async def test_the_check_comes_before_any_lookup(client: AsyncClient, auth: dict[str, str]) -> None:
    """An unknown classification with an unknown parameter: the parameter is refused, nothing is looked up."""
    await _problem(client, f"/v1/classifications/{uuid.uuid4()}?verbose=1", auth)


async def test_the_check_comes_after_authentication(client: AsyncClient) -> None:
    answer = await client.get("/v1/classify/questions?test=NL&lang=fr")
    assert answer.status_code == 401


async def test_probes_and_the_jwks_take_any_query(client: AsyncClient) -> None:
    for path in ("/livez?x=1", "/.well-known/jwks.json?x=1&x=2"):
        assert (await client.get(path)).status_code == 200, path
