from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api import CONTRACT_VERSION
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.verdict import Country, Verdict
from compliance_api.kit.schemas import VALIDATED_PER_ITEM
from compliance_api.openapi.frozen import frozen_contract, frozen_versions
from tests.classify.conftest import make_account
from tests.openapi.schemas import validator

ROOT = Path(__file__).resolve().parents[2]

API_PATH = re.compile(r"^/(api/)?v1/")
ZW = "/v1/classify/zelfstandigenwet"
CB = "/v1/classify/cross-border"
CRITERIA = "/v1/classify/cross-border/criteria"


def test_generated_contract_equals_the_frozen_file(contract: dict[str, Any]) -> None:
    """Change the API on purpose: run `make contract` and commit the new frozen file with the change."""
    assert contract == frozen_contract(CONTRACT_VERSION)


async def test_contract_is_openapi_3_1_with_a_dated_version(client: AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    assert schema["openapi"] == "3.1.0"
    assert schema["info"]["version"] == "2026-11-28"
    assert CONTRACT_VERSION in frozen_versions()


async def test_frozen_contract_is_served_by_date(client: AsyncClient) -> None:
    response = await client.get("/openapi/2026-07-09.json")
    assert response.status_code == 200
    assert {**response.json(), "servers": None} == {**frozen_contract("2026-07-09"), "servers": None}  # type: ignore[dict-item]
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


CLASSIFY_OPERATIONS = (
    "classify-zelfstandigenwet",
    "classify-cross-border",
    "classify-zelfstandigenwet-batch",
    "classify-cross-border-batch",
    "classify-zelfstandigenwet-dry-run",
    "classify-cross-border-dry-run",
    "classify-zelfstandigenwet-batch-dry-run",
    "classify-cross-border-batch-dry-run",
    "classify-cross-border-criteria",
    "classify-questions",
    "classification-get",
    "classification-update",
    "classification-list",
    "classification-dossier",
)


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _operations(contract: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        operation["operationId"]: operation
        for item in contract["paths"].values()
        for method, operation in item.items()
        if method in {"get", "post", "put", "patch", "delete"}
    }


def test_criterion_ids_verdicts_and_countries_are_enums_of_the_rulesets(contract: dict[str, Any]) -> None:
    schemas = contract["components"]["schemas"]
    rulesets = packaged_rulesets()
    assert schemas["DutchCriterionId"]["enum"] == [criterion.id for criterion in rulesets.dutch.criteria]
    assert schemas["CrossBorderCriterionName"]["enum"] == sorted(
        {name for ruleset in rulesets.cross_border.values() for name in ruleset.criterion_names}
    )
    assert schemas["Verdict"]["enum"] == [verdict.value for verdict in Verdict]
    assert schemas["Country"]["enum"] == [country.value for country in Country]

    zw, cross_border = schemas["ZWVerdict"]["properties"], schemas["CrossBorderVerdict"]["properties"]
    assert (
        zw["verdict"] == cross_border["verdict"] == schemas["AppliedRule"]["properties"]["verdict"] == _ref("Verdict")
    )
    assert zw["criteria_hit"]["items"] == schemas["DutchCriterionOut"]["properties"]["id"] == _ref("DutchCriterionId")
    assert cross_border["country"] == schemas["CriteriaCatalogue"]["properties"]["country"] == _ref("Country")
    for listed in ("criteria_met", "criteria_not_provided"):
        assert cross_border[listed]["items"] == _ref("CrossBorderCriterionName")
    assert schemas["CatalogueCriterion"]["properties"]["name"] == _ref("CrossBorderCriterionName")
    country, accept_language = _operations(contract)["classify-cross-border-criteria"]["parameters"]
    assert country["schema"]["$ref"] == _ref("Country")["$ref"]
    assert (accept_language["name"], accept_language["in"]) == ("Accept-Language", "header")

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        resolved: dict[str, Any] = schemas[node["$ref"].rsplit("/", 1)[1]]
        return resolved

    variants = {
        variant["properties"]["country"]["const"]: variant
        for variant in map(resolve, schemas["CrossBorderRequest"]["oneOf"])
    }
    assert list(variants) == [country.value for country in Country]
    for code, ruleset in rulesets.cross_border.items():
        criteria = resolve(variants[code]["properties"]["criteria"])
        assert list(criteria["properties"]) == list(ruleset.criterion_names)
        assert criteria["additionalProperties"] is False
        dont_know = variants[code]["properties"]["dont_know"]
        assert dont_know["items"]["enum"] == list(ruleset.criterion_names), "don't-know names are the country's"


def test_the_classify_operations_are_the_ones_checked_below(contract: dict[str, Any]) -> None:
    tagged = {op_id for op_id, op in _operations(contract).items() if "classify" in op.get("tags", [])}
    assert tagged == set(CLASSIFY_OPERATIONS)


@pytest.mark.parametrize(
    "op_id",
    CLASSIFY_OPERATIONS,
)
def test_every_classify_operation_has_request_and_response_examples_valid_against_their_schemas(
    contract: dict[str, Any], op_id: str
) -> None:
    operation = _operations(contract)[op_id]
    response = operation["responses"]["200"]["content"]["application/json"]
    answers = [example["value"] for example in response["examples"].values()] if "examples" in response else []
    requests: list[tuple[dict[str, Any], Any]] = [
        (response["schema"], answer) for answer in answers or [response["example"]]
    ]
    if "requestBody" in operation:
        content = operation["requestBody"]["content"]["application/json"]
        requests += [(content["schema"], example["value"]) for example in content["examples"].values()]
    for parameter in operation.get("parameters", []):
        if parameter["in"] != "header":  # the optional Idempotency-Key
            requests += [(parameter["schema"], example) for example in parameter["schema"]["examples"]]
    assert len(requests) > 1, f"{op_id} has no example request"
    for schema, example in requests:
        validator(contract, schema).validate(example)


def test_the_examples_validation_refuses_values_outside_the_enums(contract: dict[str, Any]) -> None:
    operation = _operations(contract)["classify-cross-border"]
    request = operation["requestBody"]["content"]["application/json"]
    response = operation["responses"]["200"]["content"]["application/json"]
    example = request["examples"]["example"]["value"]
    answer = response["examples"]["en"]["value"]
    assert not validator(contract, request["schema"]).is_valid({**example, "country": "NL"})
    assert not validator(contract, request["schema"]).is_valid(
        {**example, "criteria": {"subject_to_instructions": True}}
    )
    assert not validator(contract, response["schema"]).is_valid({**answer, "verdict": "maybe"})
    assert not validator(contract, response["schema"]).is_valid({**answer, "criteria_met": ["client_sets_hours"]})


async def test_the_classify_examples_are_what_the_api_answers(
    contract: dict[str, Any], client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    account = await make_account(sessionmaker, pepper)
    operations = _operations(contract)
    for op_id, path in (("classify-zelfstandigenwet", ZW), ("classify-cross-border", CB)):
        content = operations[op_id]["requestBody"]["content"]["application/json"]
        localised = operations[op_id]["responses"]["200"]["content"]["application/json"]["examples"]
        assert list(localised) == ["en", "nl", "fr", "de"]
        for language, example in localised.items():
            answer = await client.post(
                path,
                json=content["examples"]["example"]["value"],
                headers={**account.live, "Accept-Language": language},
            )
            assert answer.status_code == 200, answer.text
            assert answer.headers["Content-Language"] == language
            per_call = {"id", "created_at"}
            assert {k: v for k, v in answer.json().items() if k not in per_call} == {
                k: v for k, v in example["value"].items() if k not in per_call
            }


async def test_the_catalogue_example_is_what_the_api_answers(
    contract: dict[str, Any], client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    account = await make_account(sessionmaker, pepper)
    catalogue = _operations(contract)["classify-cross-border-criteria"]
    [country] = catalogue["parameters"][0]["schema"]["examples"]
    for language, example in catalogue["responses"]["200"]["content"]["application/json"]["examples"].items():
        answer = await client.get(
            CRITERIA, params={"country": country}, headers={**account.live, "Accept-Language": language}
        )
        assert answer.status_code == 200, answer.text
        assert answer.headers["Content-Language"] == language
        assert answer.json() == example["value"]


def _inline_variants(node: Any, path: str = "#") -> list[str]:
    """Paths of `oneOf`/`anyOf` variants that are inline objects with properties (generators name those themselves)."""
    found: list[str] = []
    if isinstance(node, dict):
        for key in ("oneOf", "anyOf"):
            for index, variant in enumerate(node.get(key, [])):
                if isinstance(variant, dict) and "properties" in variant:
                    found.append(f"{path}/{key}/{index}")
        for key, value in node.items():
            found += _inline_variants(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _inline_variants(value, f"{path}/{index}")
    return found


def test_every_union_variant_with_properties_is_a_named_component(contract: dict[str, Any]) -> None:
    """openapi-python-client generated colliding models for inline variants (`.ci/clients.sh` generates a client)."""
    assert _inline_variants(contract) == []
    discriminator = contract["components"]["schemas"]["CrossBorderRequest"]["discriminator"]
    assert discriminator["propertyName"] == "country"
    assert set(discriminator["mapping"]) == {country.value for country in Country}


def _references(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return own.union(*(_references(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_references(value) for value in node))
    return set()


def test_every_reference_resolves(contract: dict[str, Any]) -> None:
    """openapi-typescript refuses a contract with a dangling `$ref` (the webhooks' 422 once named a removed schema)."""
    schemas = contract["components"]["schemas"]
    headers = contract["components"]["headers"]
    references = _references(contract)
    assert "#/components/schemas/Problem" in references
    for reference in references:
        kind, name = reference.removeprefix("#/components/").split("/")
        assert name in {"schemas": schemas, "headers": headers}[kind], reference


def _body_properties(contract: dict[str, Any], operation: dict[str, Any]) -> set[str]:
    """The top-level properties of an operation's JSON body (through a `$ref`)."""
    schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    if isinstance(schema.get("$ref"), str):
        schema = contract["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return set(schema.get("properties", {}))


def test_every_operation_taking_a_cursor_lets_schemathesis_expect_a_foreign_cursor_400() -> None:
    """A cursor is opaque: schemathesis generates strings the API rightly refuses, so each operation taking one, as a
    query parameter (the lists) or in its body (a replay), must be named in `.ci/schemathesis.toml` (a new list, and
    later the replay's continuation, were missed and failed CI)."""
    configured = {
        operation["include-operation-id"]
        for operation in tomllib.loads((ROOT / ".ci" / "schemathesis.toml").read_text())["operations"]
        if 400 in operation.get("checks", {}).get("positive_data_acceptance", {}).get("expected-statuses", [])
    }
    contract = frozen_contract(CONTRACT_VERSION)
    assert contract is not None
    lists = {
        operation["operationId"]
        for item in contract["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
        and (
            any(parameter.get("name") == "cursor" for parameter in operation.get("parameters", []))
            or "cursor" in _body_properties(contract, operation)
        )
    }
    assert "webhook-endpoint-replay" in lists
    assert lists <= configured, f"add to .ci/schemathesis.toml: {sorted(lists - configured)}"


def _marked_per_item(contract: dict[str, Any], node: Any) -> bool:
    if isinstance(node, dict):
        if node.get(VALIDATED_PER_ITEM) is True:
            return True
        if isinstance(node.get("$ref"), str):
            return _marked_per_item(contract, contract["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]])
        return any(_marked_per_item(contract, value) for value in node.values())
    return isinstance(node, list) and any(_marked_per_item(contract, value) for value in node)


def test_every_operation_answering_invalid_items_in_a_200_lets_schemathesis_expect_it() -> None:
    """Negative data that breaks only an item of an array marked `x-validated-per-item` is answered 200 by design
    (each item gets its verdict or its own problem), so each such operation must be named in `.ci/schemathesis.toml`
    (typed batch items failed CI's negative-data check otherwise)."""
    configured = {
        operation["include-operation-id"]
        for operation in tomllib.loads((ROOT / ".ci" / "schemathesis.toml").read_text())["operations"]
        if 200 in operation.get("checks", {}).get("negative_data_rejection", {}).get("expected-statuses", [])
    }
    contract = frozen_contract(CONTRACT_VERSION)
    assert contract is not None
    per_item = {
        operation["operationId"]
        for item in contract["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and _marked_per_item(contract, operation.get("requestBody", {}))
    }
    assert per_item == {
        "classify-zelfstandigenwet-batch",
        "classify-cross-border-batch",
        "classify-zelfstandigenwet-batch-dry-run",
        "classify-cross-border-batch-dry-run",
    }
    assert per_item <= configured, f"add to .ci/schemathesis.toml: {sorted(per_item - configured)}"
