"""Base classes for request and response bodies."""

from __future__ import annotations

import datetime as dt
import itertools
from enum import StrEnum
from typing import Annotated, Any

import orjson
from pydantic import BaseModel, BeforeValidator, ConfigDict, GetJsonSchemaHandler, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError
from starlette.responses import Response

from compliance_api.kit import instants
from compliance_api.kit.field_names import known_names, shown
from compliance_api.kit.instants import InstantError, bounded, parse_instant

NUL = "\x00"
NUL_MESSAGE = "must not contain NUL (U+0000) characters"
NUL_ERROR = "nul_character"
DATE_TIME_ERROR = "date_time"
MANY_UNKNOWN_ERROR = "too_many_unknown_fields"
MAX_UNKNOWN = 20
"""Unknown fields of one object named one by one (as a problem lists at most 20 errors); more are one error."""
ESCAPED_NUL = b"\\u0000"  # how orjson writes U+0000: serialising is a tenth of the cost of walking in Python


def contains_nul(value: object) -> bool:
    """Whether a string, or any string (key or value) nested in lists and objects, holds U+0000."""
    if isinstance(value, str):
        return NUL in value
    if isinstance(value, dict):
        return any(contains_nul(key) or contains_nul(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(contains_nul(item) for item in value)
    return False


def _may_hold_nul(data: dict[Any, Any]) -> bool:
    """Whether the body's JSON has a NUL escape; a body orjson cannot write (an integer beyond 64 bits, which
    validation then refuses by name) is searched field by field instead."""
    try:
        return ESCAPED_NUL in orjson.dumps(data, default=str)
    except TypeError:
        return True


class FewUnknownFields(BaseModel):
    """A body (or part of one) that refuses many unknown fields as one error (see `_refuse_many_unknown`)."""

    @model_validator(mode="before")
    @classmethod
    def _refuse_many_unknown(cls, data: object) -> object:
        """An object with more unknown fields than a problem lists is one error counting them: pydantic would make
        one error per field, and 90,000 of them took a third of a second to make and unmake."""
        if isinstance(data, dict) and len(data) > MAX_UNKNOWN:
            known = known_names(cls)
            count = len(data.keys() - known)
            if count > MAX_UNKNOWN:
                first = itertools.islice((str(key) for key in data if key not in known), 3)
                raise PydanticCustomError(
                    MANY_UNKNOWN_ERROR,
                    "{count} fields this object does not take, such as {named}",
                    {"count": count, "named": ", ".join(f"`{shown(name)}`" for name in first)},
                )
        return data


class RequestSchema(FewUnknownFields):
    """A request body: unknown fields are errors, nothing is coerced from another type, and no string holds NUL
    (PostgreSQL cannot store it in text), and no number is NaN or infinite (JSON has neither)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _refuse_nul(cls, data: object) -> object:
        """One serialisation of the raw body finds NUL; the error context names the field (errors.py adds it)."""
        if isinstance(data, dict) and _may_hold_nul(data):
            # The escape may also be a literal backslash before "u0000": only a real NUL is refused.
            field = next((str(key) for key, value in data.items() if contains_nul(key) or contains_nul(value)), None)
            if field is not None:
                raise PydanticCustomError(NUL_ERROR, NUL_MESSAGE, {"field": field.replace(NUL, "")})
        return data


class ResponseSchema(BaseModel):
    model_config = ConfigDict(from_attributes=True)


VALIDATED_PER_ITEM = "x-validated-per-item"
"""The contract's mark of an array that takes any item and answers an invalid one in the response (a batch's
`items`): its item schema says what to send, not what refuses the request."""


class NamedEnum(StrEnum):
    """A string enum whose values are not names (`*`, `2xx`): the contract lists its members' names as
    `x-enum-varnames`, which client generators take for the constants instead of numbering them (`VALUE_0`)."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(core_schema)
        handler.resolve_ref_schema(schema)["x-enum-varnames"] = [member.name.upper() for member in cls]
        return schema


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


def _iso_datetime(value: object) -> object:
    """Accept only ISO 8601 date-times with a time zone, within the years 1 to 9999 in UTC (lax mode would take
    `0.5` as a unix timestamp; `kit.instants` says why the range). The message is the parser's own, without
    pydantic's "Value error, " in front."""
    try:
        if isinstance(value, dt.datetime) and value.tzinfo is not None:
            return bounded(value)
        if not isinstance(value, str) or "T" not in value.upper():
            raise InstantError(f"must be an ISO 8601 date-time with a time zone, e.g. {instants.EXAMPLE}")
        return parse_instant(value)
    except InstantError as exc:
        raise PydanticCustomError(DATE_TIME_ERROR, str(exc)) from None


IsoDateTime = Annotated[dt.datetime, BeforeValidator(_iso_datetime)]
"""An instant in a query or body: `YYYY-MM-DDTHH:MM:SS` with `Z` or an offset."""


def _whole_number(value: object) -> object:
    """JSON Schema counts 4.0 as an integer, so accept a float without a fraction; never a boolean."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


ACCEPT_WHOLE_FLOATS = BeforeValidator(_whole_number)
"""For integers in request bodies: `4` and `4.0` are the same number, `4.5` and `true` are errors. Put it after the
`Field` constraints in `Annotated[int, Field(...), ACCEPT_WHOLE_FLOATS]`, or the contract gets `ge`/`le` keywords."""


def json_response(body: Any, status_code: int = 200) -> Response:
    """A JSON response from data already shaped by a response model (FastAPI would validate it a second time)."""
    return Response(orjson.dumps(body), status_code=status_code, media_type="application/json")
