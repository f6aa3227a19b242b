"""Every error the app can produce is problem+json with a stable code and the request id."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from fastapi import APIRouter, FastAPI
from httpx import ASGITransport, AsyncClient
from pydantic import BaseModel, ConfigDict
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.auth.dependencies import CurrentCaller
from compliance_api.config import Settings
from compliance_api.errors import ERROR_CATALOGUE, MAX_LISTED_ERRORS, ErrorCode
from compliance_api.kit.schemas import RequestSchema
from compliance_api.sessions import DbSession
from tests.conftest import running_app
from tests.factories import bearer, create_token


class EchoIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    count: int
    label: str


class RatioIn(RequestSchema):
    count: int
    label: str
    ratio: float


def _test_routes() -> APIRouter:
    """Routes that exist only in these tests, to provoke a body, a validation failure and a crash."""
    router = APIRouter(prefix="/v1/test-only")

    @router.post("/echo")
    async def echo(body: EchoIn) -> EchoIn:
        return body

    @router.post("/ratio")
    async def ratio(body: RatioIn) -> RatioIn:
        return body

    @router.get("/items/{item_id}")
    async def item(item_id: int, limit: int = 10) -> dict[str, int]:
        return {"item_id": item_id, "limit": limit}

    @router.get("/crash")
    async def crash() -> None:
        raise RuntimeError("secret internal detail")

    @router.get("/whoami")
    async def whoami(caller: CurrentCaller) -> dict[str, str]:
        return {"user_id": str(caller.user_id), "environment": caller.environment, "tier": caller.tier.name}

    @router.post("/users")
    async def make_user(session: DbSession, email: str, fail_after: bool = False) -> dict[str, str]:
        user = await accounts_service.create(session, email=email, kind=UserKind.business, plan=Plan.free)
        if fail_after:
            raise RuntimeError("fails after the write")
        return {"id": str(user.id)}

    @router.post("/users-unflushed")
    async def add_user_unflushed(session: DbSession, email: str) -> dict[str, str]:
        """The write reaches the database only at commit, after the endpoint has returned."""
        session.add(User(email=email, kind=UserKind.business, plan=Plan.free))
        return {"status": "accepted"}

    return router


@pytest.fixture
async def app_with_test_routes(settings: Settings, engine: object) -> AsyncIterator[FastAPI]:
    async with running_app(settings, _test_routes()) as application:
        yield application


@pytest.fixture
async def http(app_with_test_routes: FastAPI) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(
        transport=ASGITransport(app=app_with_test_routes, raise_app_exceptions=False), base_url="http://api.test"
    ) as c:
        yield c


def assert_problem(response_status: int, body: dict[str, object], headers: dict[str, str], code: ErrorCode) -> None:
    assert response_status == ERROR_CATALOGUE[code].status
    assert headers["content-type"] == "application/problem+json"
    assert body["code"] == code
    assert body["status"] == response_status
    assert body["type"] == f"http://api.test/errors/{code}"
    assert body["request_id"] == headers["x-request-id"]
    assert isinstance(body["title"], str)
    assert isinstance(body["detail"], str)


async def test_unknown_route_outside_v1_is_404(http: AsyncClient) -> None:
    response = await http.get("/nowhere")
    assert_problem(response.status_code, response.json(), dict(response.headers), "not_found")


async def test_unknown_route_inside_v1_is_404_once_authenticated(http: AsyncClient, auth: dict[str, str]) -> None:
    response = await http.get("/v1/nowhere", headers=auth)
    assert_problem(response.status_code, response.json(), dict(response.headers), "not_found")
    assert response.headers["x-ratelimit-limit"] == "120"


async def test_wrong_method_is_405_with_allow(http: AsyncClient, auth: dict[str, str]) -> None:
    response = await http.delete("/v1/health", headers=auth)
    assert_problem(response.status_code, response.json(), dict(response.headers), "method_not_allowed")
    assert response.headers["allow"] == "GET"


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"count": "3", "label": "x"}, ["count"]),
        ({"count": True, "label": "x"}, ["count"]),
        ({"count": 1}, ["label"]),
        ({"count": 1, "label": "x", "extra": 1}, ["extra"]),
        ({"count": 1.5, "label": 2}, ["count", "label"]),
        ([1, 2], ["body"]),
        ("text", ["body"]),
    ],
)
async def test_validation_failures_are_400_naming_every_field(
    http: AsyncClient, auth: dict[str, str], body: object, fields: list[str]
) -> None:
    response = await http.post("/v1/test-only/echo", json=body, headers=auth)
    payload = response.json()
    assert_problem(response.status_code, payload, dict(response.headers), "validation_failed")
    assert sorted({e["field"] for e in payload["errors"]}) == sorted(fields)


@pytest.mark.parametrize("raw", [b"{", b"\xff\xfe", b"null", b"", b'{"count": 1, "label": "x"', b"{'count': 1}"])
@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "application/merge+json"]
)
async def test_a_body_that_is_not_json_or_absent_is_400_malformed_body(
    http: AsyncClient, auth: dict[str, str], raw: bytes, content_type: str
) -> None:
    response = await http.post("/v1/test-only/echo", content=raw, headers={**auth, "content-type": content_type})
    assert_problem(response.status_code, response.json(), dict(response.headers), "malformed_body")


@pytest.mark.parametrize(
    ("content_type", "raw"),
    [
        ("application/x-www-form-urlencoded", b"count=1&label=x"),
        ("text/plain", b'{"count": 1, "label": "x"}'),
        ("multipart/form-data; boundary=x", b"--x\r\nContent-Disposition: form-data; name=count\r\n\r\n1\r\n--x--"),
        ("application/xml", b"<count>1</count>"),
        (None, b'{"count": 1, "label": "x"}'),
    ],
)
async def test_a_body_in_another_media_type_is_415(
    http: AsyncClient, auth: dict[str, str], content_type: str | None, raw: bytes
) -> None:
    headers = {**auth, "content-type": content_type} if content_type else auth
    response = await http.post("/v1/test-only/echo", content=raw, headers=headers)
    payload = response.json()
    assert_problem(response.status_code, payload, dict(response.headers), "unsupported_media_type")
    assert (content_type or "without a `Content-Type`").split(";")[0] in payload["detail"]


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-Infinity"])
async def test_nan_and_infinity_are_refused_naming_the_field(
    http: AsyncClient, auth: dict[str, str], number: bytes
) -> None:
    raw = b'{"count": 1, "label": "x", "ratio": ' + number + b"}"
    response = await http.post("/v1/test-only/ratio", content=raw, headers={**auth, "content-type": "application/json"})
    payload = response.json()
    assert_problem(response.status_code, payload, dict(response.headers), "validation_failed")
    assert [e["field"] for e in payload["errors"]] == ["ratio"]


async def test_bad_path_and_query_are_400_not_422(http: AsyncClient, auth: dict[str, str]) -> None:
    response = await http.get("/v1/test-only/items/abc?limit=many", headers=auth)
    payload = response.json()
    assert_problem(response.status_code, payload, dict(response.headers), "validation_failed")
    assert sorted(e["field"] for e in payload["errors"]) == ["path.item_id", "query.limit"]


async def test_body_over_one_mebibyte_is_413(http: AsyncClient, auth: dict[str, str]) -> None:
    big = b'{"count": 1, "label": "' + b"x" * (1024 * 1024) + b'"}'
    response = await http.post("/v1/test-only/echo", content=big, headers={**auth, "content-type": "application/json"})
    assert_problem(response.status_code, response.json(), dict(response.headers), "payload_too_large")


async def test_streamed_body_over_the_limit_is_413(http: AsyncClient, auth: dict[str, str]) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"count": 1, "label": "'
        for _ in range(20):
            yield b"x" * 65536
        yield b'"}'

    response = await http.post(
        "/v1/test-only/echo", content=chunks(), headers={**auth, "content-type": "application/json"}
    )
    assert_problem(response.status_code, response.json(), dict(response.headers), "payload_too_large")


async def test_crash_is_500_without_internals(http: AsyncClient, auth: dict[str, str]) -> None:
    response = await http.get("/v1/test-only/crash", headers=auth)
    assert_problem(response.status_code, response.json(), dict(response.headers), "internal_error")
    assert "secret internal detail" not in response.text
    assert "Traceback" not in response.text


async def test_request_id_is_echoed_when_sane_and_replaced_otherwise(http: AsyncClient) -> None:
    echoed = await http.get("/livez", headers={"X-Request-Id": "client-abc.123"})
    assert echoed.headers["x-request-id"] == "client-abc.123"
    replaced = await http.get("/livez", headers={"X-Request-Id": "bad id\twith spaces" + "x" * 200})
    assert replaced.headers["x-request-id"].startswith("req_")


@pytest.mark.parametrize("offered", ["sk_live_" + "a" * 43, "x-sk_test_abc", "pst_" + "b" * 32, "whsec_c2VjcmV0"])
async def test_a_request_id_shaped_like_a_secret_is_replaced_never_echoed_or_logged(
    http: AsyncClient, offered: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """The request id is echoed in the answer and written in the access log: a token pasted there must not be."""
    response = await http.get("/livez", headers={"X-Request-Id": offered})
    assert response.headers["x-request-id"].startswith("req_")
    assert offered not in capfd.readouterr().out


async def test_every_error_code_has_a_page(http: AsyncClient) -> None:
    for code in ERROR_CATALOGUE:
        response = await http.get(f"/errors/{code}")
        assert response.status_code == 200
        assert code in response.text
    missing = await http.get("/errors/no_such_code")
    assert_problem(missing.status_code, missing.json(), dict(missing.headers), "not_found")


async def test_endpoints_see_the_authenticated_caller(
    http: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    row, token = await create_token(sessionmaker, pepper)
    response = await http.get("/v1/test-only/whoami", headers=bearer(token))
    assert response.json() == {"user_id": str(row.user_id), "environment": "live", "tier": "free"}


async def test_a_request_commits_once_and_a_failure_writes_nothing(
    http: AsyncClient, auth: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    created = await http.post("/v1/test-only/users", params={"email": "kept@example.com"}, headers=auth)
    assert created.status_code == 200
    failed = await http.post(
        "/v1/test-only/users", params={"email": "lost@example.com", "fail_after": "true"}, headers=auth
    )
    assert failed.status_code == 500
    async with sessionmaker() as session:
        assert await accounts_service.get_by_email(session, email="kept@example.com") is not None
        assert await accounts_service.get_by_email(session, email="lost@example.com") is None


async def test_a_failing_commit_is_answered_as_an_error_not_as_success(
    http: AsyncClient, auth: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    """The commit runs before the response is sent: a client never gets a 200 for a write that did not happen."""
    first = await http.post("/v1/test-only/users-unflushed", params={"email": "twice@example.com"}, headers=auth)
    assert first.status_code == 200
    second = await http.post("/v1/test-only/users-unflushed", params={"email": "twice@example.com"}, headers=auth)
    assert second.status_code == 500
    assert second.json()["code"] == "internal_error"


async def test_an_integer_beyond_64_bits_is_validated_like_any_other(http: AsyncClient, auth: dict[str, str]) -> None:
    """orjson cannot write it (the NUL check serialises the body): it must still reach validation, not a 500."""
    raw = b'{"count": 1' + b"0" * 70 + b', "label": "x", "ratio": 1.5}'
    response = await http.post("/v1/test-only/ratio", content=raw, headers={**auth, "content-type": "application/json"})
    assert response.status_code == 200
    assert response.json()["count"] == 10**70


async def test_without_a_public_base_url_types_follow_the_address_the_request_reached(
    settings: Settings, engine: object
) -> None:
    """The server's end of the connection, not the Host header (which picks the environment, and which the client
    chooses)."""
    async with (
        running_app(settings.model_copy(update={"public_base_url": ""}), _test_routes()) as application,
        AsyncClient(transport=ASGITransport(app=application), base_url="http://127.0.0.1:8010") as client,
    ):
        missing = await client.get("/v1/health", headers={"Host": "sandbox.localhost"})
        unknown = await client.get("/nowhere")
        bad_host = await client.get("/v1/health", headers={"Host": "a b"})
    assert missing.json()["type"] == "http://127.0.0.1:8010/errors/missing_token"
    assert unknown.json()["type"] == "http://127.0.0.1:8010/errors/not_found"
    assert bad_host.json()["type"] == "http://127.0.0.1:8010/errors/validation_failed"


async def test_a_problem_lists_the_first_twenty_errors_and_counts_them_all(
    http: AsyncClient, auth: dict[str, str]
) -> None:
    body = {"count": 1, "label": "x", **{f"unknown_{n}": n for n in range(5000)}}
    response = await http.post("/v1/test-only/echo", json=body, headers=auth)
    payload = response.json()
    assert_problem(response.status_code, payload, dict(response.headers), "validation_failed")
    assert len(payload["errors"]) == MAX_LISTED_ERRORS
    assert payload["error_count"] == 5000
    assert payload["detail"].endswith(f"; and {5000 - MAX_LISTED_ERRORS} more")
    assert len(response.content) < 5000


async def test_an_unknown_field_names_the_nearest_known_one_and_long_names_are_cut(
    http: AsyncClient, auth: dict[str, str]
) -> None:
    long_name = "z" * 100_000
    response = await http.post("/v1/test-only/echo", json={"count": 1, "lable": "x", long_name: 1}, headers=auth)
    errors = {error["field"]: error["message"] for error in response.json()["errors"]}
    assert "did you mean `label`?" in errors["lable"]
    assert len(response.content) < 2000
    (cut,) = [field for field in errors if field.startswith("z")]
    assert cut == "z" * 63 + "…"
