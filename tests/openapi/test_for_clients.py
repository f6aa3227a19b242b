"""What generated clients and the people who read the contract need from it: typed timestamps, named enum members,
typed batch items, descriptions written for integrators. Each guard walks the whole served contract, and is shown to
catch what it is there for."""

from __future__ import annotations

import re
from collections.abc import Iterator
from copy import deepcopy
from typing import Any

import pytest
from fastapi import FastAPI

from compliance_api.errors import too_large_detail
from compliance_api.kit.schemas import VALIDATED_PER_ITEM

Contract = dict[str, Any]

DATE_TIME_NAME = re.compile(r"(^|_)(at|since|until|after|before|expires|timestamp)$")
DATE_NAME = re.compile(r"(^|_)(on|as_of|valid_from|date)$")


def _named_schemas(node: Any, where: str = "#") -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every named schema of the contract: object properties anywhere (components, inline bodies, webhooks) and
    query and path parameters, as (where, name, schema)."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            for name, schema in properties.items():
                if isinstance(schema, dict):
                    yield f"{where}/properties/{name}", name, schema
        if node.get("in") in ("query", "path") and isinstance(node.get("schema"), dict):
            yield f"{where}/schema", str(node["name"]), node["schema"]
        for key, value in node.items():
            yield from _named_schemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _named_schemas(value, f"{where}/{index}")


def _resolve(contract: Contract, schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = contract["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _alternatives(contract: Contract, schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The non-null alternatives of a schema, unions flattened and `$ref`s followed."""
    schema = _resolve(contract, schema)
    union = schema.get("anyOf") or schema.get("oneOf")
    if union:
        return [leaf for branch in union for leaf in _alternatives(contract, branch)]
    return [] if schema.get("type") == "null" else [schema]


def untyped_timestamps(contract: Contract) -> list[str]:
    """Each property or parameter named like an instant (`…_at`, `since`…) that is not `format: date-time`, or like
    a date (`…_on`, `as_of`…) that is not `format: date`."""
    found = []
    for where, name, schema in _named_schemas(contract):
        expected = "date-time" if DATE_TIME_NAME.search(name) else "date" if DATE_NAME.search(name) else None
        if expected is None:
            continue
        alternatives = _alternatives(contract, schema)
        if not alternatives or any(a.get("type") != "string" or a.get("format") != expected for a in alternatives):
            found.append(f"{where}: not format {expected}")
    return found


def test_every_timestamp_is_a_date_time_and_every_date_a_date(app: FastAPI) -> None:
    contract = app.openapi()
    assert untyped_timestamps(contract) == []
    event = contract["components"]["schemas"]["Event"]["properties"]["created_at"]
    assert (event["type"], event["format"]) == ("string", "date-time")


def test_the_timestamp_guard_catches_every_form(app: FastAPI) -> None:
    """A plain string, a nullable one, a `$ref`, a wrong format, an inline webhook body and a query parameter."""
    contract = deepcopy(app.openapi())
    schemas = contract["components"]["schemas"]
    schemas["Event"]["properties"]["created_at"] = {"type": "string"}
    schemas["Delivery"]["properties"]["delivered_at"] = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    schemas["Stamp"] = {"type": "string"}
    schemas["Share"]["properties"]["expires_at"] = {"$ref": "#/components/schemas/Stamp"}
    schemas["Verification"]["properties"]["verified_on"] = {"type": "string", "format": "date-time"}
    webhook = contract["webhooks"]["webhook.test"]["post"]["requestBody"]["content"]["application/json"]
    webhook["schema"] = {"type": "object", "properties": {"sent_at": {"type": "integer"}}}
    [after] = [p for p in contract["paths"]["/v1/events"]["get"]["parameters"] if p["name"] == "created_after"]
    after["schema"] = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    found = untyped_timestamps(contract)
    for where in (
        "Event/properties/created_at",
        "Delivery/properties/delivered_at",
        "Share/properties/expires_at",
        "Verification/properties/verified_on: not format date",
        "webhook.test/post/requestBody/content/application/json/schema/properties/sent_at",
        "/v1/events/get/parameters/",
    ):
        assert any(where in entry for entry in found), where
    assert len(found) == 6


GENERATED_NAME = re.compile(r"^[A-Za-z]")
"""openapi-python-client names a member after its value when the value starts with a letter, else `VALUE_<n>`."""


def _enums(node: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        if isinstance(node.get("enum"), list):
            yield where, node
        for key, value in node.items():
            yield from _enums(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _enums(value, f"{where}/{index}")


def unnamed_enum_members(contract: Contract) -> list[str]:
    """Each enum with a value a generator cannot name, and no `x-enum-varnames` (one upper-case name per value)."""
    found = []
    for where, schema in _enums(contract):
        values = [value for value in schema["enum"] if value is not None]
        if all(isinstance(value, str) and GENERATED_NAME.match(value) for value in values):
            continue
        names = schema.get("x-enum-varnames", [])
        readable = all(re.fullmatch(r"[A-Z][A-Z0-9_]*", name) and not name.startswith("VALUE_") for name in names)
        if len(names) != len(schema["enum"]) or len(set(names)) != len(names) or not readable:
            found.append(where)
    return found


def test_every_enum_member_has_a_readable_name(app: FastAPI) -> None:
    contract = app.openapi()
    assert unnamed_enum_members(contract) == []
    schemas = contract["components"]["schemas"]
    events = dict(zip(schemas["EventType"]["enum"], schemas["EventType"]["x-enum-varnames"], strict=True))
    assert events["*"] == "ALL"
    assert events["classification.created"] == "CLASSIFICATION_CREATED"  # the name generators gave it before
    assert schemas["StatusClass"]["x-enum-varnames"] == ["SUCCESS", "REDIRECT", "CLIENT_ERROR", "SERVER_ERROR"]


def test_the_enum_guard_catches_a_value_without_a_name(app: FastAPI) -> None:
    contract = deepcopy(app.openapi())
    del contract["components"]["schemas"]["StatusClass"]["x-enum-varnames"]
    contract["components"]["schemas"]["EventType"]["x-enum-varnames"][0] = "VALUE_0"
    assert unnamed_enum_members(contract) == ["#/components/schemas/EventType", "#/components/schemas/StatusClass"]


BATCHES = {
    "/v1/classify/zelfstandigenwet/batch": ("ZelfstandigenwetBatchRequest", "ZelfstandigenwetRequest"),
    "/v1/classify/cross-border/batch": ("CrossBorderBatchRequest", "CrossBorderRequest"),
}


@pytest.mark.parametrize("path", BATCHES)
def test_batch_items_are_typed_as_the_single_operation_s_body(app: FastAPI, path: str) -> None:
    contract = app.openapi()
    batch_name, item_name = BATCHES[path]
    operation = contract["paths"][path]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": f"#/components/schemas/{batch_name}"}
    items = contract["components"]["schemas"][batch_name]["properties"]["items"]
    assert items["items"] == {"$ref": f"#/components/schemas/{item_name}"}
    assert items[VALIDATED_PER_ITEM] is True  # an invalid item is answered in `data`, not refused with the batch
    single = operation["operationId"].removesuffix("-batch")
    [single_body] = [
        item["post"]["requestBody"]["content"]["application/json"]["schema"]
        for item in contract["paths"].values()
        if item.get("post", {}).get("operationId") == single
    ]
    assert single_body == items["items"]


def test_the_untyped_batch_request_stays_in_the_contract(app: FastAPI) -> None:
    """Code generated from the contract before the items were typed names `BatchRequest`."""
    batch = app.openapi()["components"]["schemas"]["BatchRequest"]
    assert batch["required"] == ["items"]
    assert batch["properties"]["items"]["items"] == {}


INTERNALS = re.compile(
    r"\b(RequestSchema|ResponseSchema|BaseModel|pydantic|SQLAlchemy|ORM|FastAPI|Starlette|dataclass|models?|rows?|"
    r"tables?|columns?|compliance_api|NUL check)\b|\b\w+\.py\b|(^|\s)docs/",
    re.IGNORECASE,
)
PYTHON_LITERALS = re.compile(r"\b(True|False|None)\b")


def _texts(node: Any, where: str = "#") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("description", "summary", "title") and isinstance(value, str):
                yield f"{where}/{key}", value
            else:
                yield from _texts(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _texts(value, f"{where}/{index}")


def internals_in_descriptions(contract: Contract) -> list[str]:
    """Each description, summary or title that speaks of the implementation: class and library names, database
    rows and tables, source paths, Python's spelling of `true`, `false` and `null`."""
    return [
        f"{where}: {match.group(0).strip()}"
        for where, text in _texts(contract)
        for match in [*INTERNALS.finditer(text), *PYTHON_LITERALS.finditer(text)]
    ]


def test_descriptions_speak_to_integrators(app: FastAPI) -> None:
    assert internals_in_descriptions(app.openapi()) == []


def test_the_description_guard_catches_internals(app: FastAPI) -> None:
    contract = deepcopy(app.openapi())
    schemas = contract["components"]["schemas"]
    schemas["BatchRequest"]["description"] = (
        "A batch (a plain model, not a RequestSchema: the NUL check too is per item)."
    )
    schemas["WttaAdmissionOut"]["properties"]["source"]["description"] = "Which register file the row came from."
    schemas["RateBenchmarkOut"]["properties"]["synthetic"]["description"] = "True when generated."
    schemas["AdmissionStatus"]["description"] = "Their legal meaning is in docs/integrate/wtta.md."
    schemas["StatusClass"]["description"] = "As counted in requestlog/service.py."
    assert sorted(entry.rsplit(": ", 1)[1] for entry in internals_in_descriptions(contract)) == [
        "NUL check",
        "RequestSchema",
        "True",
        "docs/",
        "model",
        "row",
        "service.py",
    ]


@pytest.mark.parametrize("path", BATCHES)
def test_the_batch_operations_document_the_body_limit_and_how_to_split(app: FastAPI, path: str) -> None:
    """The 413 a batch answers is tested in tests/classify/test_batch.py against this example."""
    operation = app.openapi()["paths"][path]["post"]
    assert "at most 1 MiB" in operation["description"]
    too_large = operation["responses"]["413"]
    assert "split the batch" in too_large["description"]
    [example] = too_large["content"]["application/problem+json"]["examples"].values()
    assert example["value"]["code"] == "payload_too_large"
    assert example["value"]["detail"].startswith(too_large_detail(1024 * 1024).removesuffix("."))
    assert "; split the batch into several requests" in example["value"]["detail"]
