"""Base classes for request and response bodies."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class RequestSchema(BaseModel):
    """A request body: unknown fields are errors, and nothing is coerced from another type."""

    model_config = ConfigDict(extra="forbid", strict=True)


class ResponseSchema(BaseModel):
    model_config = ConfigDict(from_attributes=True)
