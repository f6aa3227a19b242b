"""Names a request may use, for a did-you-mean: the nearest known name to an unknown one, and the field names a
pydantic model takes at a place in a body (`engagement` inside a classify request, an item of a batch…)."""

from __future__ import annotations

import difflib
import types
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

MAX_SHOWN_NAME = 64
"""A name echoed in an error is cut to this many characters: a 1 MB key is not repeated back."""


def shown(name: str) -> str:
    return name if len(name) <= MAX_SHOWN_NAME else name[: MAX_SHOWN_NAME - 1] + "…"


def nearest(name: str, known: Sequence[str]) -> str | None:
    """The known name closest to `name` (difflib), if any is close; `name` is cut first, so the work stays small."""
    found = difflib.get_close_matches(name[:MAX_SHOWN_NAME], known, n=1)
    return found[0] if found else None


def _types_in(annotation: Any) -> Iterator[Any]:
    """The concrete types of an annotation: through `Annotated`, `Optional` and unions."""
    origin = get_origin(annotation)
    if origin is Annotated:
        yield from _types_in(get_args(annotation)[0])
    elif origin is Union or origin is types.UnionType:
        for member in get_args(annotation):
            yield from _types_in(member)
    else:
        yield annotation


def _step(annotation: Any, part: int | str) -> Any | None:
    """The annotation one step into `annotation`: a model's field by name or alias, a list's or dict's item."""
    for candidate in _types_in(annotation):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel) and isinstance(part, str):
            for name, field in candidate.model_fields.items():
                if part in (name, field.alias):
                    return field.annotation
        elif get_origin(candidate) in (list, tuple, set, frozenset, Sequence) and isinstance(part, int):
            return get_args(candidate)[0]
        elif get_origin(candidate) is dict and isinstance(part, str):
            return get_args(candidate)[1]
    return None


@cache
def known_names(model: type[BaseModel]) -> frozenset[str]:
    """The names a body may use for `model`'s fields: each field's name and its alias."""
    return frozenset(name for field, info in model.model_fields.items() for name in (field, info.alias) if name)


@cache
def _names_of(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(field.alias or name for name, field in model.model_fields.items())


def known_fields(model: type[BaseModel], path: Sequence[int | str]) -> tuple[str, ...]:
    """The field names of the model found at `path` inside `model` (none if the path leads to no model)."""
    annotation: Any = model
    for part in path:
        annotation = _step(annotation, part)
        if annotation is None:
            return ()
    for candidate in _types_in(annotation):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return _names_of(candidate)
    return ()
