"""`/changelog.atom`: an Atom feed of the contract's dated versions and of the rulesets in force, so that an
integrator's feed reader or tooling learns of a new ruleset version (verdicts may change) or a new contract.

Each entry's id names what it announces (`…:ruleset:nl-zw:2026-11-26`, `…:contract:2026-07-09`), so a new version is
a new entry and nothing else is; `updated` is the version's own date, so the feed is the same on every server and
every request. Written with feedgen (Atom 1.0, escaping and dates done by the library).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from fastapi import APIRouter, Request
from fastapi.responses import Response
from feedgen.feed import FeedGenerator

from compliance_api.classify.dependencies import rulesets_of
from compliance_api.classify.ruleset import RulesetHeader, Rulesets
from compliance_api.config import bases_of
from compliance_api.openapi.frozen import frozen_versions

router = APIRouter(include_in_schema=False)
PATH = "/changelog.atom"
FEED_ID = "tag:compliance-api,2026:changelog"
MEDIA_TYPE = "application/atom+xml"


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def _rulesets(rulesets: Rulesets) -> list[RulesetHeader]:
    return [rulesets.dutch, *(rulesets.cross_border[country] for country in sorted(rulesets.cross_border))]


def changelog_feed(base_url: str, rulesets: Iterable[RulesetHeader], contracts: Iterable[str]) -> bytes:
    """The feed as Atom XML: one entry per ruleset in force and per dated contract, newest first."""
    feed = FeedGenerator()
    feed.id(FEED_ID)
    feed.title("compliance-api: contract and ruleset changes")
    feed.subtitle("New dated API contracts and new ruleset versions (a new ruleset version may change verdicts).")
    feed.author({"name": "compliance-api"})
    feed.link(href=f"{base_url}{PATH}", rel="self", type=MEDIA_TYPE)
    feed.link(href=f"{base_url}/guide/changelog/", rel="alternate", type="text/html")
    dates: list[dt.datetime] = []
    for version in sorted(contracts):
        day = _midnight(dt.date.fromisoformat(version))
        entry = feed.add_entry()
        entry.id(f"{FEED_ID}:contract:{version}")
        entry.title(f"API contract {version}")
        entry.link(href=f"{base_url}/openapi/{version}.json", rel="alternate", type="application/json")
        entry.summary(
            f"The contract dated {version}, served at /openapi/{version}.json; additive changes to it and every "
            "visible change are in the changelog (/guide/changelog/)."
        )
        entry.updated(day)
        dates.append(day)
    for ruleset in rulesets:
        day = _midnight(ruleset.version)
        entry = feed.add_entry()
        entry.id(f"{FEED_ID}:ruleset:{ruleset.id}:{ruleset.version.isoformat()}")
        entry.title(f"Ruleset {ruleset.id} version {ruleset.version.isoformat()}")
        entry.link(href=f"{base_url}/guide/integrate/classify/", rel="alternate", type="text/html")
        entry.summary(
            f"{ruleset.law}: version {ruleset.version.isoformat()}, valid from {ruleset.valid_from.isoformat()}. "
            "Verdicts made from now on follow it; monitored classifications are re-scored under it."
        )
        entry.updated(day)
        dates.append(day)
    feed.updated(max(dates))
    body: bytes = feed.atom_str(pretty=True)
    return body


@router.get(PATH)
async def changelog_atom(request: Request) -> Response:
    """The feed, with this deployment's base URL in its links."""
    bases = bases_of(request)
    base_url = bases.production or bases.sandbox or ""
    body = changelog_feed(base_url, _rulesets(rulesets_of(request)), frozen_versions())
    return Response(body, media_type=MEDIA_TYPE, headers={"Cache-Control": "public, max-age=3600"})
