"""Environment hints: the caller's own id or share-token sent to the wrong environment is answered with where it
belongs (`in_other_environment`, naming the environment and its base URL) instead of the bare 404 of an unknown one.

A route's 404 is looked at once it is raised, so the hot paths pay nothing: only a miss costs one more indexed read.
Anyone else's id answers the same 404 as before, so nothing is told about other accounts. A share-token is a bearer
capability: whoever holds an active one may verify it, so its holder is told where it works.
"""

from __future__ import annotations

import uuid

from fastapi import FastAPI, Request
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from compliance_api.auth.caller import Caller
from compliance_api.auth.dependencies import peppers_of
from compliance_api.classify import queries as classify_queries
from compliance_api.config import bases_of
from compliance_api.dac7 import queries as dac7_queries
from compliance_api.errors import ApiError, Problems
from compliance_api.events import queries as events_queries
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Elsewhere, Environment
from compliance_api.passport import queries as passport_queries
from compliance_api.passport.share_tokens import MAX_LENGTH, hash_share_token
from compliance_api.sessions import transaction
from compliance_api.webhooks import queries as webhooks_queries

NOT_FOUND_CODES = frozenset(
    {"not_found", "event_not_found", "webhook_endpoint_not_found", "share_not_found", "grant_not_found"}
)

BY_ID: dict[str, tuple[str, Elsewhere]] = {
    "classification_id": ("This classification", classify_queries.environment_elsewhere),
    "event_id": ("This event", events_queries.environment_elsewhere),
    "endpoint_id": ("This webhook endpoint", webhooks_queries.environment_elsewhere),
    "grant_id": ("This DAC7 grant", dac7_queries.environment_elsewhere),
    "share_id": ("This share-token id", passport_queries.environment_elsewhere),
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
        for name, (what, lookup) in found[-1:]:  # the innermost id the route names (an endpoint's, a share's)
            try:
                key = uuid.UUID(str(params[name]))
            except ValueError:  # not a UUID: the route's own validation answers it
                return None
            other = await lookup(session, key, caller.user_id, caller.environment)
            if other is not None:
                return _hint(request, other, what)
        token = params.get("token")
        if isinstance(token, str) and len(token) <= MAX_LENGTH:
            other = await _active_share(session, request, token, caller.environment)
            if other is not None:
                return _hint(request, other, "This share-token")
    return None


async def _active_share(
    session: AsyncSession, request: Request, token: str, environment: Environment
) -> Environment | None:
    hashes = [hash_share_token(token, pepper) for pepper in peppers_of(request) if pepper]
    return await passport_queries.active_share_elsewhere(session, hashes, environment, utcnow())


def _hint(request: Request, environment: Environment, what: str) -> ApiError:
    bases = bases_of(request)
    base_url = bases.production if environment is Environment.live else bases.sandbox
    where = f"{environment.place}'s base URL{f', {base_url}' if base_url else ''}"
    return ApiError(
        "in_other_environment",
        f"{what} is yours in {environment.place}, not here: send the request to {where}.",
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
