"""Environment hints: the caller's own id or share-token sent to the wrong environment is answered with where it
belongs (`in_other_environment`, naming the environment and its base URL) instead of the bare 404 of an unknown one.

A route's 404 is looked at once it is raised, so the hot paths pay nothing: only a miss costs one more indexed read.
Anyone else's id answers the same 404 as before, so nothing is told about other accounts. A share-token is a bearer
capability: whoever holds an active one may verify it, so its holder is told where it works.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from fastapi import FastAPI, Request
from sqlalchemy import Select, select
from starlette.responses import Response

from compliance_api.auth.caller import Caller
from compliance_api.auth.dependencies import peppers_of
from compliance_api.classify.models import Classification
from compliance_api.config import bases_of
from compliance_api.dac7.models import Dac7Grant
from compliance_api.errors import ApiError, Problems
from compliance_api.events.models import OutboxEvent
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport.models import Passport, PassportShare
from compliance_api.passport.share_tokens import MAX_LENGTH, hash_share_token
from compliance_api.sessions import transaction
from compliance_api.webhooks.models import WebhookEndpoint

NOT_FOUND_CODES = frozenset(
    {"not_found", "event_not_found", "webhook_endpoint_not_found", "share_not_found", "grant_not_found"}
)

Elsewhere = Callable[[uuid.UUID, str, Environment], Select[Environment]]
"""The environments other than the caller's in which the path's id (or token) is the caller's own."""


def _owned(model: type[Classification | OutboxEvent | WebhookEndpoint | Dac7Grant], owner: str) -> Elsewhere:
    def statement(user_id: uuid.UUID, key: str, environment: Environment) -> Select[Environment]:
        return select(model.environment).where(
            model.id == uuid.UUID(key), getattr(model, owner) == user_id, model.environment != environment
        )

    return statement


def _share(user_id: uuid.UUID, key: str, environment: Environment) -> Select[Environment]:
    return (
        select(PassportShare.environment)
        .join(Passport, Passport.id == PassportShare.passport_id)
        .where(
            PassportShare.id == uuid.UUID(key), Passport.user_id == user_id, PassportShare.environment != environment
        )
    )


BY_ID: dict[str, tuple[str, Elsewhere]] = {
    "classification_id": ("This classification", _owned(Classification, "user_id")),
    "event_id": ("This event", _owned(OutboxEvent, "owner_id")),
    "endpoint_id": ("This webhook endpoint", _owned(WebhookEndpoint, "user_id")),
    "grant_id": ("This DAC7 grant", _owned(Dac7Grant, "seller_user_id")),
    "share_id": ("This share-token id", _share),
}
"""By path parameter: what it names, and where else it is the caller's."""


async def elsewhere(request: Request, exc: ApiError) -> ApiError | None:
    """The `in_other_environment` problem for a 404 of the caller's own id or an active share-token sent to the
    wrong environment; None when the 404 stands."""
    caller = request.scope.get("state", {}).get("caller")
    if exc.code not in NOT_FOUND_CODES or not isinstance(caller, Caller):
        return None
    params = request.path_params
    found = [(name, BY_ID[name]) for name in params if name in BY_ID]
    if not found and "token" not in params:
        return None
    async with transaction(request) as session:
        for name, (what, statement) in found[-1:]:  # the innermost id the route names (an endpoint's, a share's)
            try:
                other = await session.scalar(statement(caller.user_id, str(params[name]), caller.environment))
            except ValueError:  # not a UUID: the route's own validation answers it
                return None
            if other is not None:
                return _hint(request, other, what)
        token = params.get("token")
        if isinstance(token, str) and len(token) <= MAX_LENGTH:
            other = await session.scalar(_active_share(request, token, caller.environment))
            if other is not None:
                return _hint(request, other, "This share-token")
    return None


def _active_share(request: Request, token: str, environment: Environment) -> Select[Environment]:
    hashes = [hash_share_token(token, pepper) for pepper in peppers_of(request) if pepper]
    return select(PassportShare.environment).where(
        PassportShare.token_hash.in_(hashes),
        PassportShare.environment != environment,
        PassportShare.revoked_at.is_(None),
        PassportShare.expires_at > utcnow(),
    )


def _hint(request: Request, environment: Environment, what: str) -> ApiError:
    bases = bases_of(request)
    base_url = bases.production if environment is Environment.live else bases.sandbox
    where = f"the {environment.label}'s base URL{f', {base_url}' if base_url else ''}"
    return ApiError(
        "in_other_environment",
        f"{what} is yours in the {environment.label}, not here: send the request to {where}.",
        extensions={"environment": environment.value, **({"base_url": base_url} if base_url else {})},
    )


def install_hints(app: FastAPI, problems: Problems) -> None:
    """Answer every ApiError as `errors.install_error_handlers` does, a 404 of an id that is the caller's in the
    other environment with the hint instead."""

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        answered = await elsewhere(request, exc) or exc
        return problems.response(
            request.scope,
            answered.code,
            detail=str(answered.detail),
            errors=answered.errors,
            headers=answered.headers,
            extensions=answered.extensions,
        )

    app.add_exception_handler(ApiError, api_error)
