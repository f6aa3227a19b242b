"""Breaking changes between two OpenAPI 3.1 contracts, found by comparing their JSON Schemas structurally.

A change breaks a client when a request it sends today would be refused tomorrow (an operation removed, a request
field removed from a closed object or made required, an enum value removed, a type or constraint narrowed), or when a
response it reads today could lose something (a response field removed or made optional, an enum value removed, a
type it does not expect). `$ref`s are resolved; `anyOf`/`oneOf` branches are matched by their types. (No library on
PyPI does this for 3.1 with the maturity of oasdiff, which is Go; this is the subset our contract needs.)

An array marked `x-validated-per-item` (a batch's `items`) takes any item and answers an invalid one in the response:
its item schema describes what to send, so narrowing it refuses no request; dropping the mark does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from compliance_api.kit.schemas import VALIDATED_PER_ITEM

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
EXACT_CONSTRAINTS = ("pattern", "format", "multipleOf")
Direction = Literal["request", "response"]
Schema = dict[str, Any]


@dataclass(frozen=True, slots=True, order=True)
class Change:
    where: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.where}: {self.detail}"


def breaking_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every change from `old` to `new` that can break a client written against `old`, sorted by place."""
    differ = _Differ(old, new)
    for path, item in old.get("paths", {}).items():
        new_item = new.get("paths", {}).get(path, {})
        for method in METHODS:
            if method not in item:
                continue
            where = f"{method.upper()} {path}"
            if method not in new_item:
                differ.report(where, "operation_removed", "the operation no longer exists")
            else:
                differ.operation(where, item[method], new_item[method])
    return sorted(set(differ.changes))


def _types(schema: Schema) -> frozenset[str] | None:
    """The JSON types a (resolved) schema admits, union branches included; None when any type is admitted."""
    declared = schema.get("type")
    if declared is not None:
        types = {declared} if isinstance(declared, str) else set(declared)
        return frozenset(types | ({"integer"} if "number" in types else set()))
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        return frozenset(_json_type(value) for value in values)
    return None


def _json_type(value: object) -> str:
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    return "null" if value is None else names.get(type(value), "object")


def _enum(schema: Schema) -> list[Any] | None:
    if "const" in schema:
        return [schema["const"]]
    values = schema.get("enum")
    return list(values) if values is not None else None


@dataclass
class _Differ:
    old_doc: dict[str, Any]
    new_doc: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    _seen: set[tuple[int, int, str]] = field(default_factory=set)

    def report(self, where: str, kind: str, detail: str) -> None:
        self.changes.append(Change(where, kind, detail))

    def operation(self, where: str, old: Schema, new: Schema) -> None:
        self._parameters(where, old.get("parameters", []), new.get("parameters", []))
        self._request_body(where, old.get("requestBody"), new.get("requestBody"))
        new_responses = new.get("responses", {})
        for status, response in old.get("responses", {}).items():
            new_response = new_responses.get(status)
            if new_response is None:
                if status.startswith("2"):
                    self.report(where, "response_status_removed", f"no longer answers {status}")
                continue
            old_content = self._resolve(self.old_doc, response).get("content", {})
            new_content = self._resolve(self.new_doc, new_response).get("content", {})
            for media, body in old_content.items():
                if media not in new_content:
                    self.report(f"{where} {status}", "response_media_type_removed", f"no longer returns {media}")
                elif "schema" in body and "schema" in new_content[media]:
                    self.schema(f"{where} {status} {media}", body["schema"], new_content[media]["schema"], "response")

    def _parameters(self, where: str, old: list[Schema], new: list[Schema]) -> None:
        def keyed(doc: dict[str, Any], params: list[Schema]) -> dict[tuple[str, str], Schema]:
            resolved = (self._resolve(doc, p) for p in params)
            return {(p["in"], p["name"]): p for p in resolved}

        old_params, new_params = keyed(self.old_doc, old), keyed(self.new_doc, new)
        for key, param in new_params.items():
            place = f"{where} {key[0]} parameter {key[1]}"
            previous = old_params.get(key)
            if param.get("required") and not (previous and previous.get("required")):
                self.report(place, "request_field_required", "the parameter is now required")
            if previous is not None and "schema" in previous and "schema" in param:
                self.schema(place, previous["schema"], param["schema"], "request")

    def _request_body(self, where: str, old: Schema | None, new: Schema | None) -> None:
        old = self._resolve(self.old_doc, old) if old else None
        new = self._resolve(self.new_doc, new) if new else None
        if new is None:
            return
        place = f"{where} request body"
        if new.get("required") and not (old and old.get("required")):
            self.report(place, "request_field_required", "a request body is now required")
        if old is None:
            return
        for media, body in old.get("content", {}).items():
            new_body = new.get("content", {}).get(media)
            if new_body is None:
                self.report(place, "request_media_type_removed", f"no longer accepts {media}")
            elif "schema" in body and "schema" in new_body:
                self.schema(f"{place} {media}", body["schema"], new_body["schema"], "request")

    def _resolve(self, doc: dict[str, Any], node: Schema) -> Schema:
        """Follow `$ref`s (local JSON pointers) until a node without one."""
        hops = 0
        while "$ref" in node:
            pointer = node["$ref"]
            if not pointer.startswith("#/") or hops > 64:
                raise ValueError(f"cannot resolve $ref {pointer!r}")
            target: Any = doc
            for part in pointer[2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node, hops = target, hops + 1
        return node

    def schema(self, where: str, old: Schema, new: Schema, direction: Direction) -> None:
        old, new = self._resolve(self.old_doc, old), self._resolve(self.new_doc, new)
        key = (id(old), id(new), direction)
        if key in self._seen:
            return
        self._seen.add(key)
        self._compare_types(where, old, new, direction)
        self._compare_enums(where, old, new, direction)
        old_branches, new_branches = self._branches(self.old_doc, old), self._branches(self.new_doc, new)
        if len(old_branches) > 1 or len(new_branches) > 1:
            self._compare_branches(where, old_branches, new_branches, direction)
            return
        old, new = old_branches[0], new_branches[0]
        if direction == "request":
            self._compare_constraints(where, old, new)
        self._compare_properties(where, old, new, direction)
        for keyword, suffix in (("items", "[]"), ("additionalProperties", "{}")):
            if keyword == "items" and direction == "request" and new.get(VALIDATED_PER_ITEM) is True:
                continue
            if isinstance(old.get(keyword), dict) and isinstance(new.get(keyword), dict):
                self.schema(where + suffix, old[keyword], new[keyword], direction)

    def _branches(self, doc: dict[str, Any], schema: Schema) -> list[Schema]:
        """The alternatives of a union, flattened and resolved; a schema without `anyOf`/`oneOf` is its own."""
        alternatives = schema.get("anyOf") or schema.get("oneOf")
        if not alternatives:
            return [schema]
        return [leaf for branch in alternatives for leaf in self._branches(doc, self._resolve(doc, branch))]

    def _union_types(self, doc: dict[str, Any], schema: Schema) -> frozenset[str] | None:
        found: set[str] = set()
        for branch in self._branches(doc, schema):
            types = _types(branch)
            if types is None:
                return None
            found |= types
        return frozenset(found)

    def _compare_types(self, where: str, old: Schema, new: Schema, direction: Direction) -> None:
        old_types, new_types = self._union_types(self.old_doc, old), self._union_types(self.new_doc, new)
        if direction == "request" and new_types is not None and (old_types is None or not old_types <= new_types):
            accepted = "any type" if old_types is None else ", ".join(sorted(old_types))
            self.report(where, "type_narrowed", f"accepted {accepted}, now only {', '.join(sorted(new_types))}")
        if direction == "response" and old_types is not None and (new_types is None or not new_types <= old_types):
            returned = "any type" if new_types is None else ", ".join(sorted(new_types))
            self.report(where, "response_type_changed", f"was {', '.join(sorted(old_types))}, may now be {returned}")

    def _compare_enums(self, where: str, old: Schema, new: Schema, direction: Direction) -> None:
        old_values = self._union_enum(self.old_doc, old)
        new_values = self._union_enum(self.new_doc, new)
        if new_values is None:
            return
        if old_values is None:
            if direction == "request":
                self.report(where, "type_narrowed", f"now limited to {sorted(map(str, new_values))}")
            return
        removed = [value for value in old_values if value not in new_values]
        if removed:
            self.report(where, "enum_value_removed", f"removed {', '.join(map(str, removed))}")

    def _union_enum(self, doc: dict[str, Any], schema: Schema) -> list[Any] | None:
        """The enumerated values of a schema, across union branches; None when some branch is not enumerated."""
        values: list[Any] = []
        for branch in self._branches(doc, schema):
            branch_values = _enum(branch)
            if branch_values is None:
                if branch.get("type") == "null":
                    branch_values = [None]
                else:
                    return None
            values.extend(branch_values)
        return values

    def _compare_branches(self, where: str, old: list[Schema], new: list[Schema], direction: Direction) -> None:
        """Pair each old alternative with the new one of the same title and types, else of the same types (the
        type check already reported an alternative left without a partner)."""
        for branch in old:
            types = _types(branch)
            partner = next((b for b in new if _types(b) == types and b.get("title") == branch.get("title")), None)
            if partner is None:
                partner = next((b for b in new if _types(b) == types), None)
            if partner is None and types is not None:
                partner = next((b for b in new if (t := _types(b)) is not None and types & t), None)
            if partner is not None:
                self.schema(where, branch, partner, direction)

    def _compare_constraints(self, where: str, old: Schema, new: Schema) -> None:
        for keyword in UPPER_BOUNDS:
            if keyword in new and (keyword not in old or new[keyword] < old[keyword]):
                self.report(where, "type_narrowed", f"{keyword} {old.get(keyword, 'none')} → {new[keyword]}")
        for keyword in LOWER_BOUNDS:
            if keyword in new and (keyword not in old or new[keyword] > old[keyword]):
                self.report(where, "type_narrowed", f"{keyword} {old.get(keyword, 'none')} → {new[keyword]}")
        for keyword in EXACT_CONSTRAINTS:
            if keyword in new and new[keyword] != old.get(keyword):
                self.report(where, "type_narrowed", f"{keyword} {old.get(keyword, 'none')!r} → {new[keyword]!r}")
        if new.get("additionalProperties") is False and old.get("additionalProperties") is not False:
            self.report(where, "type_narrowed", "no longer accepts additional properties")
        if old.get(VALIDATED_PER_ITEM) is True and new.get(VALIDATED_PER_ITEM) is not True:
            self.report(where, "type_narrowed", "an invalid item now fails the whole request")

    def _compare_properties(self, where: str, old: Schema, new: Schema, direction: Direction) -> None:
        old_props: dict[str, Schema] = old.get("properties", {})
        new_props: dict[str, Schema] = new.get("properties", {})
        old_required, new_required = set(old.get("required", ())), set(new.get("required", ()))
        closed = new.get("additionalProperties") is False
        for name, schema in old_props.items():
            place = f"{where}.{name}"
            if name not in new_props:
                if direction == "response":
                    self.report(place, "response_field_removed", "the field is no longer returned")
                elif closed:
                    self.report(place, "request_field_removed", "the field is no longer accepted")
                continue
            if direction == "response" and name in old_required and name not in new_required:
                self.report(place, "response_field_optional", "the field may now be missing")
            self.schema(place, schema, new_props[name], direction)
        if direction == "request":
            for name in sorted(new_required - old_required):
                self.report(f"{where}.{name}", "request_field_required", "the field is now required")
