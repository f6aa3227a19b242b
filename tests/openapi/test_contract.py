from __future__ import annotations

import re

from fastapi import FastAPI
from httpx import AsyncClient

from compliance_api import CONTRACT_VERSION
from compliance_api.openapi.contract import frozen_contract, frozen_versions

API_PATH = re.compile(r"^/(api/)?v1/")


async def test_generated_contract_equals_the_frozen_file(app: FastAPI) -> None:
    """Change the API on purpose: run `make contract` and commit the new frozen file with the change."""
    assert app.openapi() == frozen_contract(CONTRACT_VERSION)


async def test_contract_is_openapi_3_1_with_a_dated_version(client: AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    assert schema["openapi"] == "3.1.0"
    assert schema["info"]["version"] == "2026-07-09"
    assert CONTRACT_VERSION in frozen_versions()


async def test_frozen_contract_is_served_by_date(client: AsyncClient) -> None:
    response = await client.get("/openapi/2026-07-09.json")
    assert response.status_code == 200
    assert response.json() == frozen_contract("2026-07-09")
    for unknown in ("/openapi/2020-01-01.json", "/openapi/latest.json", "/openapi/..%2Fconfig.json"):
        missing = await client.get(unknown)
        assert missing.status_code == 404
        assert missing.headers["content-type"] == "application/problem+json"


async def test_every_operation_documents_auth_errors_and_rate_limit_headers(client: AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    operations = [
        (path, op)
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if method in {"get", "post", "put", "patch", "delete"}
    ]
    assert operations
    for path, operation in operations:
        assert API_PATH.match(path), path
        assert operation["security"] == [{"bearerAuth": []}]
        responses = operation["responses"]
        assert {"401", "429", "500", "503"} <= set(responses), path
        assert "422" not in responses
        assert "Retry-After" in responses["429"]["headers"]
        assert "WWW-Authenticate" in responses["401"]["headers"]
        success = next(r for status, r in responses.items() if status.startswith("2"))
        assert {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} <= set(success["headers"])
        if operation.get("parameters") or operation.get("requestBody"):
            assert "400" in responses
    problem = schema["components"]["schemas"]["Problem"]
    assert "rate_limited" in problem["properties"]["code"]["enum"]
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


async def test_docs_render_from_local_assets_only(client: AsyncClient) -> None:
    page = await client.get("/docs")
    assert page.status_code == 200
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources
    for source in sources:
        assert source.startswith("/"), f"/docs loads {source} from another host"
        assert (await client.get(source)).status_code == 200, source


def _keys(node: object) -> set[str]:
    if isinstance(node, dict):
        return set(node).union(*(_keys(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_keys(value) for value in node))
    return set()


def test_no_python_constraint_names_leak_into_the_contract() -> None:
    """`ge`/`le` instead of `minimum`/`maximum` mean a constraint the contract does not state (clients and
    schemathesis would then send values the server refuses)."""
    contract = frozen_contract(CONTRACT_VERSION)
    assert contract is not None
    assert not _keys(contract["components"]["schemas"]) & {"ge", "le", "gt", "lt", "max_length", "min_length"}


async def test_every_frozen_contract_stays_served_at_its_date(client: AsyncClient) -> None:
    for version in frozen_versions():
        response = await client.get(f"/openapi/{version}.json")
        assert response.status_code == 200
        assert response.json()["info"]["version"] == version
