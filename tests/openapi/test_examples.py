"""Every operation of the contract shows a request, its answers and its 4xx problems by example, each valid."""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import pytest
from fastapi import FastAPI
from httpx import AsyncClient

from compliance_api import CONTRACT_VERSION
from compliance_api.openapi.contract import DEFAULT_SERVERS
from compliance_api.openapi.frozen import frozen_contract
from tests.openapi.schemas import validator

METHODS = ("get", "post", "put", "patch", "delete")


def _operations(contract: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", operation)
        for path, item in contract["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def _media_examples(media: dict[str, Any]) -> list[Any]:
    return ([media["example"]] if "example" in media else []) + [
        example["value"] for example in media.get("examples", {}).values()
    ]


def _parameter_examples(parameter: dict[str, Any]) -> list[Any]:
    own = [parameter["example"]] if "example" in parameter else []
    return own + list(parameter["schema"].get("examples", []))


def missing_examples(contract: dict[str, Any]) -> list[str]:
    """Each place of the contract that should carry an example and does not."""
    missing = []
    for where, operation in _operations(contract):
        for media_type, media in operation.get("requestBody", {}).get("content", {}).items():
            if not _media_examples(media):
                missing.append(f"{where} request {media_type}")
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "path" and not _parameter_examples(parameter):
                missing.append(f"{where} path parameter {parameter['name']}")
        for status, response in operation["responses"].items():
            if status[0] not in "24":
                continue
            if status[0] == "4" and not response.get("content"):
                missing.append(f"{where} {status} has no content")
            for media_type, media in response.get("content", {}).items():
                if not _media_examples(media):
                    missing.append(f"{where} {status} {media_type}")
    return missing


def _examples_with_schemas(contract: dict[str, Any]) -> list[tuple[str, dict[str, Any], Any]]:
    found = []
    for where, operation in _operations(contract):
        for media in operation.get("requestBody", {}).get("content", {}).values():
            found += [(f"{where} request", media["schema"], value) for value in _media_examples(media)]
        for parameter in operation.get("parameters", []):
            place = f"{where} parameter {parameter['name']}"
            found += [(place, parameter["schema"], value) for value in _parameter_examples(parameter)]
        for status, response in operation["responses"].items():
            for media in response.get("content", {}).values():
                if "schema" in media:
                    found += [(f"{where} {status}", media["schema"], value) for value in _media_examples(media)]
    return found


def test_every_operation_has_request_response_and_problem_examples(app: FastAPI) -> None:
    assert missing_examples(app.openapi()) == []


def test_the_walk_notices_a_missing_example(app: FastAPI) -> None:
    contract = deepcopy(app.openapi())
    create = contract["paths"]["/v1/webhook-endpoints"]["post"]
    del create["requestBody"]["content"]["application/json"]["examples"]
    del create["responses"]["201"]["content"]["application/json"]["example"]
    create["responses"]["404"] = {"description": "not documented"}
    assert missing_examples(contract) == [
        "POST /v1/webhook-endpoints request application/json",
        "POST /v1/webhook-endpoints 201 application/json",
        "POST /v1/webhook-endpoints 404 has no content",
    ]


def test_every_example_is_valid_against_its_schema(app: FastAPI) -> None:
    contract = app.openapi()
    examples = _examples_with_schemas(contract)
    assert len(examples) > 200
    invalid = [f"{where}: {error}" for where, schema, value in examples for error in _errors(contract, schema, value)]
    assert invalid == []


def _errors(contract: dict[str, Any], schema: dict[str, Any], value: Any) -> list[str]:
    return [error.message for error in validator(contract, schema).iter_errors(value)]


def test_the_validation_catches_a_wrong_example(app: FastAPI) -> None:
    contract = app.openapi()
    endpoint = contract["paths"]["/v1/webhook-endpoints/{endpoint_id}"]["get"]["responses"]["200"]["content"]
    answer = endpoint["application/json"]["example"]
    assert _errors(contract, endpoint["application/json"]["schema"], answer) == []
    assert _errors(contract, endpoint["application/json"]["schema"], {**answer, "status": "sleeping"})
    problem = contract["paths"]["/v1/events/{event_id}"]["get"]["responses"]["404"]["content"]
    example = problem["application/problem+json"]["examples"]["event_not_found"]["value"]
    assert example["status"] == 404
    assert _errors(contract, problem["application/problem+json"]["schema"], {**example, "code": "no_such_code"})


def test_a_problem_example_names_the_codes_the_answer_documents(app: FastAPI) -> None:
    responses = app.openapi()["paths"]["/v1/rates/benchmark"]["get"]["responses"]
    assert set(responses["404"]["content"]["application/problem+json"]["examples"]) == {
        "unknown_sector",
        "insufficient_data",
    }
    validation = responses["400"]["content"]["application/problem+json"]["examples"]["validation_failed"]["value"]
    assert validation["errors"][0]["field"].startswith("query.")


def test_the_frozen_contract_names_a_default_installation_s_servers() -> None:
    contract = frozen_contract(CONTRACT_VERSION)
    assert contract is not None
    assert contract["servers"] == DEFAULT_SERVERS
    assert [server["url"] for server in DEFAULT_SERVERS] == ["http://127.0.0.1:8000", "http://127.0.0.1:8001"]


@pytest.mark.parametrize("path", ["/openapi.json", f"/openapi/{CONTRACT_VERSION}.json"])
async def test_a_served_contract_names_the_deployment_s_servers(client: AsyncClient, path: str) -> None:
    """The test settings set `COMPLIANCE_PUBLIC_BASE_URL=http://api.test`; the sandbox host stays the default."""
    served = (await client.get(path)).json()
    assert [server["url"] for server in served["servers"]] == ["http://api.test", "http://sandbox.localhost"]
