"""Breaking-change detection on crafted pairs of contracts: one pair per kind of break, and additions that pass."""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from typing import Any

import pytest

from compliance_api import CONTRACT_VERSION
from compliance_api.openapi.diff import breaking_changes
from compliance_api.openapi.frozen import frozen_contract

Contract = dict[str, Any]


def _base() -> Contract:
    """A small contract shaped like ours: refs to components, an optional field as anyOf with null, enums."""
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "2026-01-01"},
        "paths": {
            "/v1/things": {
                "post": {
                    "parameters": [
                        {"name": "dry_run", "in": "query", "required": False, "schema": {"type": "boolean"}},
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ThingIn"}}},
                    },
                    "responses": {
                        "201": {
                            "description": "created",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}},
                        }
                    },
                },
                "get": {"responses": {"200": {"description": "ok"}}},
            }
        },
        "components": {
            "schemas": {
                "Colour": {"type": "string", "enum": ["red", "green"]},
                "ThingIn": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string", "maxLength": 100},
                        "rate": {"type": "number", "minimum": 0},
                        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                        "colour": {"$ref": "#/components/schemas/Colour"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                    },
                },
                "Thing": {
                    "type": "object",
                    "required": ["id", "name", "colour"],
                    "properties": {
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "colour": {"$ref": "#/components/schemas/Colour"},
                        "owner": {"anyOf": [{"$ref": "#/components/schemas/Owner"}, {"type": "null"}]},
                    },
                },
                "Owner": {"type": "object", "required": ["email"], "properties": {"email": {"type": "string"}}},
            }
        },
    }


def _changed(edit: Callable[[Contract], None]) -> list[tuple[str, str]]:
    old = _base()
    new = deepcopy(old)
    edit(new)
    return [(change.kind, change.where) for change in breaking_changes(old, new)]


def _schemas(contract: Contract) -> dict[str, Any]:
    schemas: dict[str, Any] = contract["components"]["schemas"]
    return schemas


REQUEST = "POST /v1/things request body application/json"
RESPONSE = "POST /v1/things 201 application/json"


def test_identical_contracts_have_no_breaking_change() -> None:
    assert _changed(lambda c: None) == []


def test_removed_operation_breaks() -> None:
    assert _changed(lambda c: c["paths"]["/v1/things"].pop("get")) == [("operation_removed", "GET /v1/things")]


def test_removed_path_breaks_every_operation() -> None:
    assert _changed(lambda c: c["paths"].pop("/v1/things")) == [
        ("operation_removed", "GET /v1/things"),
        ("operation_removed", "POST /v1/things"),
    ]


def test_removed_response_field_breaks_even_behind_a_ref() -> None:
    assert _changed(lambda c: _schemas(c)["Thing"]["properties"].pop("name")) == [
        ("response_field_removed", f"{RESPONSE}.name")
    ]
    assert _changed(lambda c: _schemas(c)["Owner"]["properties"].pop("email")) == [
        ("response_field_removed", f"{RESPONSE}.owner.email")
    ]


def test_response_field_made_optional_breaks() -> None:
    assert _changed(lambda c: _schemas(c)["Thing"]["required"].remove("id")) == [
        ("response_field_optional", f"{RESPONSE}.id")
    ]


def test_removed_enum_value_breaks_requests_and_responses() -> None:
    assert sorted(_changed(lambda c: _schemas(c)["Colour"]["enum"].remove("green"))) == [
        ("enum_value_removed", f"{RESPONSE}.colour"),
        ("enum_value_removed", f"{REQUEST}.colour"),
    ]


def test_optional_request_field_made_required_breaks() -> None:
    assert _changed(lambda c: _schemas(c)["ThingIn"]["required"].append("rate")) == [
        ("request_field_required", f"{REQUEST}.rate")
    ]


def test_new_required_request_field_breaks() -> None:
    def edit(c: Contract) -> None:
        _schemas(c)["ThingIn"]["properties"]["country"] = {"type": "string"}
        _schemas(c)["ThingIn"]["required"].append("country")

    assert _changed(edit) == [("request_field_required", f"{REQUEST}.country")]


def test_parameter_made_required_breaks() -> None:
    def edit(c: Contract) -> None:
        c["paths"]["/v1/things"]["post"]["parameters"][0]["required"] = True

    assert _changed(edit) == [("request_field_required", "POST /v1/things query parameter dry_run")]


def test_removed_request_field_of_a_closed_object_breaks() -> None:
    assert _changed(lambda c: _schemas(c)["ThingIn"]["properties"].pop("tags")) == [
        ("request_field_removed", f"{REQUEST}.tags")
    ]


@pytest.mark.parametrize(
    ("field", "schema"),
    [
        ("rate", {"type": "integer", "minimum": 0}),  # number → integer
        ("note", {"type": "string"}),  # null removed from the union
        ("note", {"anyOf": [{"type": "string", "maxLength": 20}, {"type": "null"}]}),  # maxLength added in a branch
        ("name", {"type": "string", "maxLength": 50}),  # smaller maximum length
        ("rate", {"type": "number", "minimum": 1}),  # larger minimum
        ("rate", {"type": "number", "minimum": 0, "maximum": 1000}),  # maximum added
        ("name", {"type": "string", "maxLength": 100, "pattern": "^[a-z]+$"}),  # pattern added
        ("tags", {"type": "array", "items": {"type": "string"}, "maxItems": 3}),  # maxItems added
        ("tags", {"type": "array", "items": {"type": "integer"}}),  # items narrowed
        ("name", {"type": "string", "maxLength": 100, "enum": ["a", "b"]}),  # free text → enum
    ],
)
def test_narrowed_request_type_breaks(field: str, schema: dict[str, Any]) -> None:
    def edit(c: Contract) -> None:
        _schemas(c)["ThingIn"]["properties"][field] = schema

    changes = _changed(edit)
    assert changes
    assert {kind for kind, _ in changes} == {"type_narrowed"}
    assert all(where.startswith(f"{REQUEST}.{field}") for _, where in changes)


def test_widened_response_type_breaks_clients() -> None:
    def edit(c: Contract) -> None:
        _schemas(c)["Thing"]["properties"]["id"] = {"type": ["string", "integer"]}

    assert _changed(edit) == [("response_type_changed", f"{RESPONSE}.id")]


def test_removed_success_status_breaks() -> None:
    def edit(c: Contract) -> None:
        responses = c["paths"]["/v1/things"]["post"]["responses"]
        responses["200"] = responses.pop("201")

    assert _changed(edit) == [("response_status_removed", "POST /v1/things")]


def test_additions_do_not_break() -> None:
    def edit(c: Contract) -> None:
        c["paths"]["/v1/others"] = {"get": {"responses": {"200": {"description": "ok"}}}}
        schemas = _schemas(c)
        schemas["ThingIn"]["properties"]["country"] = {"type": "string"}  # new optional request field
        schemas["Thing"]["properties"]["created_at"] = {"type": "string", "format": "date-time"}  # new response field
        schemas["Colour"]["enum"].append("blue")  # new enum value
        schemas["ThingIn"]["properties"]["rate"] = {"type": "number"}  # constraint relaxed
        schemas["ThingIn"]["properties"]["name"] = {"type": "string", "maxLength": 200}  # longer maximum
        schemas["ThingIn"]["required"] = []  # required request field made optional
        c["paths"]["/v1/things"]["post"]["parameters"].append(
            {"name": "trace", "in": "header", "required": False, "schema": {"type": "string"}}
        )
        c["paths"]["/v1/things"]["post"]["responses"]["409"] = {"description": "conflict"}

    assert _changed(edit) == []


def test_recursive_schemas_terminate() -> None:
    def self_referencing(c: Contract) -> None:
        _schemas(c)["Owner"]["properties"]["manager"] = {"$ref": "#/components/schemas/Owner"}

    old = _base()
    self_referencing(old)
    new = deepcopy(old)
    _schemas(new)["Owner"]["properties"].pop("email")
    kinds = {(change.kind, change.where) for change in breaking_changes(old, new)}
    assert ("response_field_removed", f"{RESPONSE}.owner.email") in kinds


def test_the_frozen_contract_has_no_breaking_change_against_itself() -> None:
    contract = frozen_contract(CONTRACT_VERSION)
    assert contract is not None
    assert breaking_changes(contract, deepcopy(contract)) == []


def test_union_alternatives_are_paired_by_title() -> None:
    def with_union(c: Contract) -> None:
        team = {"title": "Team", "type": "object", "required": ["slug"], "properties": {"slug": {"type": "string"}}}
        _schemas(c)["Owner"]["title"] = "Owner"
        _schemas(c)["Team"] = team
        _schemas(c)["Thing"]["properties"]["owner"] = {
            "oneOf": [{"$ref": "#/components/schemas/Owner"}, {"$ref": "#/components/schemas/Team"}]
        }

    old = _base()
    with_union(old)
    new = deepcopy(old)
    _schemas(new)["Team"]["properties"].pop("slug")
    changes = [(change.kind, change.where) for change in breaking_changes(old, new)]
    assert changes == [("response_field_removed", f"{RESPONSE}.owner.slug")]
    assert breaking_changes(old, deepcopy(old)) == []


def _batch_of_tags(c: Contract, *, per_item: bool, items: dict[str, Any]) -> None:
    """`tags` as a batch's items: any item taken and answered on its own when marked `x-validated-per-item`."""
    tags: dict[str, Any] = {"type": "array", "items": items}
    if per_item:
        tags["x-validated-per-item"] = True
    _schemas(c)["ThingIn"]["properties"]["tags"] = tags


def test_typing_the_items_of_an_array_validated_per_item_does_not_break() -> None:
    old, new = _base(), _base()
    _batch_of_tags(old, per_item=False, items={})
    _batch_of_tags(new, per_item=True, items={"$ref": "#/components/schemas/Owner"})
    assert breaking_changes(old, new) == []
    unmarked = _base()
    _batch_of_tags(unmarked, per_item=False, items={"$ref": "#/components/schemas/Owner"})
    assert {change.kind for change in breaking_changes(old, unmarked)} == {"type_narrowed", "request_field_required"}


def test_validating_the_items_with_the_request_again_breaks() -> None:
    old, new = _base(), _base()
    _batch_of_tags(old, per_item=True, items={"$ref": "#/components/schemas/Owner"})
    _batch_of_tags(new, per_item=False, items={"$ref": "#/components/schemas/Owner"})
    assert [(change.kind, change.where) for change in breaking_changes(old, new)] == [
        ("type_narrowed", f"{REQUEST}.tags")
    ]
