"""The dashboard's pages and navigation, in one registry.

A page module exposes `PAGE = DashboardPage(router, nav)`; `pages/__init__.py` lists them. Webhooks and DAC7 pages
slot in the same way: a module under `pages/`, templates under `templates/<name>/`, one line in `DASHBOARD_PAGES`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter


@dataclass(frozen=True, slots=True)
class NavItem:
    label: str
    path: str  # relative to the dashboard's mount point, e.g. "/api-tokens"
    order: int


@dataclass(frozen=True, slots=True)
class DashboardPage:
    router: APIRouter
    nav: NavItem | None = None
