"""`/changelog.atom`: an Atom feed with one entry per dated contract and per ruleset version in force; a new ruleset
version is a new entry, and the feed reads the same on every request."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET

from httpx import AsyncClient

from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.openapi.feed import FEED_ID, changelog_feed
from compliance_api.openapi.frozen import frozen_versions

ATOM = "{http://www.w3.org/2005/Atom}"


def _entries(body: bytes) -> dict[str, ET.Element]:
    root = ET.fromstring(body)
    assert root.tag == f"{ATOM}feed"
    return {str(entry.findtext(f"{ATOM}id")): entry for entry in root.iter(f"{ATOM}entry")}


async def test_the_feed_lists_every_dated_contract_and_ruleset_in_force(client: AsyncClient) -> None:
    answer = await client.get("/changelog.atom")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/atom+xml")
    entries = _entries(answer.content)
    rulesets = packaged_rulesets()
    expected = {f"{FEED_ID}:contract:{version}" for version in frozen_versions()} | {
        f"{FEED_ID}:ruleset:{ruleset.id}:{ruleset.version.isoformat()}"
        for ruleset in [rulesets.dutch, *rulesets.cross_border.values()]
    }
    assert set(entries) == expected
    dutch = entries[f"{FEED_ID}:ruleset:{rulesets.dutch.id}:{rulesets.dutch.version.isoformat()}"]
    assert dutch.findtext(f"{ATOM}updated", "").startswith(rulesets.dutch.version.isoformat())
    link = dutch.find(f"{ATOM}link")
    assert link is not None
    assert link.get("href") == "http://api.test/guide/integrate/classify/"
    assert (await client.get("/changelog.atom")).content == answer.content, "the same feed on every request"


def test_a_new_ruleset_version_is_a_new_entry_and_the_feed_is_updated_then() -> None:
    rulesets = packaged_rulesets()
    later = rulesets.dutch.version + dt.timedelta(days=30)
    newer = rulesets.dutch.model_copy(update={"version": later, "valid_from": later})
    before = changelog_feed("https://api.example.com", [rulesets.dutch], ["2026-07-09"])
    after = changelog_feed("https://api.example.com", [newer], ["2026-07-09"])
    added = set(_entries(after)) - set(_entries(before))
    assert added == {f"{FEED_ID}:ruleset:nl-zw:{later.isoformat()}"}
    assert ET.fromstring(after).findtext(f"{ATOM}updated", "").startswith(later.isoformat())
