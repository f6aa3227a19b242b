"""Strict query strings for every `/v1` operation: a parameter the operation does not declare, or one given twice that
is not a list, is a 400 naming it (with the nearest declared name for a misspelt one).

Otherwise `?verdit=unsafe` would answer the whole list as if it had matched, `?lang=fr` would answer English with a
200, and `?kvk=1&kvk=2` would look up the last number. The check runs in the route's handler, so after the gateway has
authenticated the caller and before any dependency or lookup; the probes and the JWKS are not `/v1` routes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from typing import Any, get_origin

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.datastructures import QueryParams

from compliance_api.kit.field_names import nearest, shown
from compliance_api.kit.invalid import InvalidFields

SEQUENCES = (list, tuple, set, frozenset, Sequence)


class StrictQueryRoute(APIRoute):
    """The route class of every `/v1` router: refuses unknown and repeated query parameters (see the module)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        declared = declared_query(self)

        async def strict(request: Request) -> Response:
            if request.scope.get("query_string"):  # the usual request has none: nothing to parse
                refuse_undeclared(request.query_params, declared)
            return await handler(request)

        return strict


def declared_query(route: APIRoute) -> dict[str, bool]:
    """The query parameters `route` takes, by the name a request sends, each with whether it is a list: those of its
    FastAPI parameters and dependencies, and those its `openapi_extra` documents (a hot route reading its own)."""
    declared: dict[str, bool] = {}
    dependants = [route.dependant]
    while dependants:
        dependant = dependants.pop()
        for field in dependant.query_params:
            declared[field.alias] = _is_list(field.field_info.annotation)
        dependants.extend(dependant.dependencies)
    for parameter in _documented(route.openapi_extra or {}):
        declared[parameter["name"]] = parameter.get("schema", {}).get("type") == "array"
    return declared


def _documented(extra: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    return (parameter for parameter in extra.get("parameters", ()) if parameter.get("in") == "query")


def _is_list(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is None:
        return False
    if origin in SEQUENCES:
        return True
    return any(_is_list(member) for member in getattr(annotation, "__args__", ()))


def refuse_undeclared(params: QueryParams, declared: Mapping[str, bool]) -> None:
    """`InvalidFields` (a 400 `validation_failed`) naming each unknown parameter and each non-list one given more
    than once."""
    counts = Counter(name for name, _ in params.multi_items())
    errors = [
        (f"query.{shown(name)}", _unknown(name, declared))
        if name not in declared
        else (f"query.{shown(name)}", f"given {times} times; give it once")
        for name, times in counts.items()
        if name not in declared or (times > 1 and not declared[name])
    ]
    if errors:
        raise InvalidFields(errors)


def _unknown(name: str, declared: Mapping[str, bool]) -> str:
    known = sorted(declared)
    likely = nearest(name, known)
    if likely is not None:
        return f"unknown query parameter `{shown(name)}`; did you mean `{likely}`?"
    if not known:
        return f"unknown query parameter `{shown(name)}`; this operation takes no query parameters"
    return f"unknown query parameter `{shown(name)}`; this operation takes {', '.join(f'`{k}`' for k in known)}"
