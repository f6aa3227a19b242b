"""The contract (current and frozen), offline interactive docs, and one documentation page per error code."""

from __future__ import annotations

import html
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from compliance_api.config import bases_of
from compliance_api.errors import ERROR_CATALOGUE, ApiError
from compliance_api.openapi.contract import contract_servers
from compliance_api.openapi.frozen import frozen_contract

router = APIRouter(include_in_schema=False)
DOCS_STATIC = "/static/docs"
GUIDE = "/guide"


@router.get("/openapi.json")
async def current_contract(request: Request) -> JSONResponse:
    schema: dict[str, Any] = request.app.openapi()
    return JSONResponse(_as_served(schema, request), headers={"Cache-Control": "public, max-age=300"})


@router.get("/openapi/{version}.json")
async def dated_contract(version: str, request: Request) -> JSONResponse:
    schema = frozen_contract(version) if _is_date(version) else None
    if schema is None:
        raise ApiError("not_found", f"No contract was frozen on {version!r}; see /openapi.json for the current one.")
    return JSONResponse(_as_served(schema, request), headers={"Cache-Control": "public, max-age=86400"})


def _as_served(schema: dict[str, Any], request: Request) -> dict[str, Any]:
    """The contract with this deployment's `servers`: its public base URL (or the address asked), and the sandbox."""
    return {**schema, "servers": contract_servers(bases_of(request))}


def _is_date(value: str) -> bool:
    return (
        len(value) == 10
        and value[4] == value[7] == "-"
        and (value[:4] + value[5:7] + value[8:]).isascii()
        and (value[:4] + value[5:7] + value[8:]).isdigit()
    )


@router.get("/docs")
async def docs() -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title="Compliance API",
        swagger_js_url=f"{DOCS_STATIC}/swagger-ui-bundle.js",
        swagger_css_url=f"{DOCS_STATIC}/swagger-ui.css",
        swagger_favicon_url=f"{DOCS_STATIC}/favicon.png",
    )


@router.get("/errors")
async def error_index() -> HTMLResponse:
    rows = "".join(
        f'<tr><td><a href="/errors/{s.code}">{s.code}</a></td><td>{s.status}</td><td>{html.escape(s.title)}</td></tr>'
        for s in ERROR_CATALOGUE.values()
    )
    return HTMLResponse(
        _page("Error codes", f"<table><tr><th>code</th><th>status</th><th>title</th></tr>{rows}</table>")
    )


@router.get("/errors/{code}")
async def error_page(code: str) -> HTMLResponse:
    spec = next((spec for known, spec in ERROR_CATALOGUE.items() if known == code), None)
    if spec is None:
        raise ApiError("not_found", f"No error code {code!r}; see /errors.")
    body = f"<p><code>{spec.code}</code> · HTTP {spec.status}</p><p>{html.escape(spec.description)}</p>"
    return HTMLResponse(_page(spec.title, body))


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}<p><a href=/errors>All error codes</a></p></body></html>"
    )


async def _to_guide(_: Request) -> RedirectResponse:
    return RedirectResponse(GUIDE + "/")


def mount_guide(app: FastAPI, site: Path) -> None:
    """The built guide (`make docs`) at /guide/; without a build, /guide/ says how to make one."""
    if (site / "index.html").is_file():
        app.add_route(GUIDE, _to_guide, include_in_schema=False)
        app.mount(GUIDE, StaticFiles(directory=site, html=True), name="guide")
        return

    async def guide_not_built(_: Request) -> HTMLResponse:
        body = "<p>This installation has no built guide: run <code>make docs</code> and restart, or read docs/.</p>"
        return HTMLResponse(_page("Guide not built", body), status_code=404)

    app.add_route(GUIDE, guide_not_built, include_in_schema=False)
    app.add_route(GUIDE + "/", guide_not_built, include_in_schema=False)


def mount_docs_assets(app: FastAPI) -> None:
    """Swagger UI's assets come from the fastapi-offline package, so /docs needs no internet access."""
    static = resources.files("fastapi_offline").joinpath("static")
    app.mount(DOCS_STATIC, StaticFiles(directory=str(static)), name="docs-static")
