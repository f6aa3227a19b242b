"""Base classes for request and response bodies."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict


class RequestSchema(BaseModel):
    """A request body: unknown fields are errors, and nothing is coerced from another type."""

    model_config = ConfigDict(extra="forbid", strict=True)


class ResponseSchema(BaseModel):
    model_config = ConfigDict(from_attributes=True)


def _iso_date(value: object) -> object:
    """Accept only `YYYY-MM-DD` strings (strict mode would refuse every string; lax mode would take timestamps)."""
    if isinstance(value, str):
        if len(value) != 10:
            raise ValueError("must be a date as YYYY-MM-DD")
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError("must be a valid date as YYYY-MM-DD") from None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    raise ValueError("must be a date as YYYY-MM-DD")


IsoDate = Annotated[dt.date, BeforeValidator(_iso_date)]
"""A calendar date in a request body, `YYYY-MM-DD`."""


def _whole_number(value: object) -> object:
    """JSON Schema counts 4.0 as an integer, so accept a float without a fraction; never a boolean."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


WHOLE_NUMBER = BeforeValidator(_whole_number)
"""The validator of `WholeNumber`. For an optional bounded field write the bounds before it:
`Annotated[int, Field(ge=0, le=7), WHOLE_NUMBER] | None`; bounds after it inside a union reach the contract
as raw `ge`/`le`, which JSON Schema ignores."""

WholeNumber = Annotated[int, WHOLE_NUMBER]
"""An integer in a request body; `4` and `4.0` are the same number, `4.5` and `true` are errors."""
