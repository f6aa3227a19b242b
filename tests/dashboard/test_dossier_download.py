"""The verdict page's download link: the signed dossier as a PDF, for its owner only."""

from __future__ import annotations

import uuid

from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.dashboard import throttle
from tests.dashboard.test_classifications_page import PAGE, _classify, _integrator
from tests.dossier.conftest import attached_jws, pdf_text, verify_jws


async def test_the_verdict_page_links_its_signed_dossier(
    browser: AsyncClient, client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    fay = await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    made = await _classify(client, fay.live, {"engagement": {"hourly_rate_eur": 80}, "reference": "fay-1"})
    link = f"{PAGE}/live/{made['id']}/dossier.pdf"
    assert f'href="{link}"' in (await browser.get(f"{PAGE}/live/{made['id']}")).text

    download = await browser.get(link)
    assert download.status_code == 200
    assert download.headers["content-type"] == "application/pdf"
    assert download.headers["content-disposition"] == f'attachment; filename="dossier-{made["id"]}.pdf"'
    assert "fay-1" in pdf_text(download.content)
    payload = await verify_jws(client, attached_jws(download.content))
    assert (payload["classification_id"], payload["reference"]) == (made["id"], "fay-1")


async def test_nobody_else_and_no_other_environment_downloads_a_dossier(
    browser: AsyncClient,
    other_browser: AsyncClient,
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
) -> None:
    fay = await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    made = await _classify(client, fay.live, {"engagement": {}, "reference": "private-ref"})
    await _integrator(other_browser, sessionmaker, pepper, "bob@example.com")
    for path in (f"{PAGE}/live/{made['id']}", f"{PAGE}/test/{made['id']}", f"{PAGE}/live/{uuid.uuid4()}"):
        seen = await other_browser.get(path + "/dossier.pdf")
        assert seen.status_code == 404
        assert "private-ref" not in seen.text
    assert (await browser.get(f"{PAGE}/test/{made['id']}/dossier.pdf")).status_code == 404


async def test_dossier_downloads_are_limited_per_user_and_others_are_not_held(
    browser: AsyncClient,
    other_browser: AsyncClient,
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
) -> None:
    fay = await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    made = await _classify(client, fay.live, {"engagement": {}, "reference": "flood"})
    link = f"{PAGE}/live/{made['id']}/dossier.pdf"
    for _ in range(throttle.DOSSIERS_PER_USER.burst):
        assert (await browser.get(link)).status_code == 200
    held = await browser.get(link)
    assert held.status_code == 429
    assert 1 <= int(held.headers["retry-after"]) <= 60
    assert "Too many" in held.text
    bob = await _integrator(other_browser, sessionmaker, pepper, "bob@example.com")
    his = await _classify(client, bob.live, {"engagement": {}, "reference": "bob-1"})
    assert (await other_browser.get(f"{PAGE}/live/{his['id']}/dossier.pdf")).status_code == 200
