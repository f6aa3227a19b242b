"""Validation messages name the expected format in words, never as a regular expression."""

from __future__ import annotations

from typing import Any

import pytest
from httpx import AsyncClient

from compliance_api.kit.patterns import PATTERN_WORDS


def _patterns(node: Any) -> set[str]:
    """Every `pattern` in a contract (request parameters and bodies, responses alike)."""
    if isinstance(node, dict):
        found = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return found.union(*(_patterns(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_patterns(value) for value in node))
    return set()


def test_every_pattern_in_the_contract_is_said_in_words(contract: dict[str, Any]) -> None:
    assert _patterns(contract) - set(PATTERN_WORDS) == set()


@pytest.mark.parametrize(
    ("path", "params", "field", "words"),
    [
        ("/v1/wtta/lookup", {"kvk": "1234"}, "query.kvk", "8 digits"),
        ("/v1/wtta/lookup", {"kvk": "1234567a"}, "query.kvk", "8 digits"),
        ("/v1/rates/benchmark", {"sector": "ict", "region": "NL-XX"}, "query.region", "`NL-UT`"),
    ],
)
async def test_a_value_of_the_wrong_format_is_refused_in_words(
    client: AsyncClient, auth: dict[str, str], path: str, params: dict[str, str], field: str, words: str
) -> None:
    response = await client.get(path, params=params, headers=auth)
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["field"] == field
    assert error["message"].startswith("must be ")
    assert words in error["message"]
    assert "^" not in error["message"]
    assert "[" not in error["message"]


async def test_an_idempotency_key_of_the_wrong_format_is_refused_in_words(
    client: AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post(
        "/v1/webhook-endpoints",
        json={"url": "https://example.com/hook"},
        headers={**auth, "Idempotency-Key": "\t"},
    )
    assert response.status_code == 400
    messages = [e["message"] for e in response.json()["errors"]]
    assert any("printable ASCII" in message for message in messages)
