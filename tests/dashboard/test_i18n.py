"""The dashboard in Dutch, English, French and German: every text of the templates and pages is in the catalogues
and translated in each; the language follows `Accept-Language` and the switch, which a cookie remembers."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po
from fastapi import FastAPI
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify.language import Language
from compliance_api.classify.schemas import DutchTariefgrensOut
from compliance_api.classify.verdict import Verdict
from compliance_api.dac7.schemas import Grant
from compliance_api.dashboard import labels
from compliance_api.dashboard.i18n import LANGUAGE_COOKIE, TRANSLATED, Translator, catalogue_path
from compliance_api.dashboard.web import TEMPLATES_DIR
from compliance_api.kit.environment import Environment
from compliance_api.passport.catalogue import packaged_catalogue
from compliance_api.rates.catalogue import SECTORS
from compliance_api.webhooks.catalogue import EVENT_TYPES, VerdictChangeCause
from compliance_api.webhooks.models import DeliveryStatus, EndpointStatus
from tests.dashboard.conftest import RecordingMailer, csrf_of, new_browser, post_form, sign_in, sign_up

ROOT = Path(__file__).resolve().parents[2]
SIGNED_IN_PAGES = (
    "/freelancer/api-tokens",
    "/freelancer/passport",
    "/freelancer/webhooks",
    "/freelancer/dac7",
    "/freelancer/classifications",
    "/freelancer/events",
    "/freelancer/rates",
    "/freelancer/logs",
    "/freelancer/usage",
)
SIGNED_OUT_PAGES = ("/freelancer/sign-in", "/freelancer/sign-up", "/freelancer/reset-password")
# Literal words a template may hold untranslated: names, units and codes that every language writes alike (and paths,
# which start with a slash).
SAME_IN_EVERY_LANGUAGE = {"compliance-api", "URL", "TIN", "EUR", "ms", "p25", "p75", "DAC7"}
TRANSLATED_ATTRIBUTES = re.compile(r'\b(?:aria-label|placeholder|title|alt)="([^"{]*)"')


def _extracted() -> set[str | tuple[str, str]]:
    """The message ids Babel extracts from the dashboard with the project's `babel.cfg`, as `make messages` does."""
    with (ROOT / "babel.cfg").open() as config:
        method_map, options_map = parse_mapping_cfg(config)  # type: ignore[no-untyped-call]
    found: set[str | tuple[str, str]] = set()
    for _, _, message, _, _ in extract_from_dir(ROOT, method_map, options_map):
        found.add(message if isinstance(message, str) else (message[0], message[1]))
    return found


def _catalogue(language: Language) -> Catalog:
    with catalogue_path(language).open("rb") as po:
        return read_po(po, locale=language.code)


@pytest.mark.parametrize("language", TRANSLATED, ids=lambda language: language.code)
def test_every_extracted_message_is_translated(language: Language) -> None:
    catalogue = _catalogue(language)
    extracted = _extracted()
    assert len(extracted) > 400, "the extraction found the templates and pages"
    held = {message.id if isinstance(message.id, str) else tuple(message.id) for message in catalogue if message.id}
    assert sorted(map(str, extracted - held)) == [], "run `make messages` and translate the new entries"
    assert sorted(map(str, held - extracted)) == [], "run `make messages`: these are no longer used"
    untranslated, fuzzy = [], []
    for message in catalogue:
        if not message.id:
            continue
        strings = list(message.string) if isinstance(message.string, tuple | list) else [message.string or ""]
        expected = catalogue.num_plurals if message.pluralizable else 1
        if len(strings) != expected or not all(string.strip() for string in strings):
            untranslated.append(message.id)
        if message.fuzzy:
            fuzzy.append(message.id)
    assert untranslated == []
    assert fuzzy == []
    problems = [(message.id, [str(error) for error in errors]) for message, errors in catalogue.check()]
    assert problems == [], "a translation must keep the %(name)s placeholders of its message id"


def _visible_template_text(source: str) -> str:
    """What a template shows outside `{% trans %}` blocks and expressions: literal text and translatable attributes."""
    source = re.sub(r"\{#.*?#\}", " ", source, flags=re.S)
    source = re.sub(r"\{%-? trans\b.*?%\}.*?\{%-? endtrans -?%\}", " ", source, flags=re.S)
    source = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", " ", source, flags=re.S)
    attributes = " ".join(TRANSLATED_ATTRIBUTES.findall(source))
    source = re.sub(r"<(code|pre|script|style)\b.*?</\1>", " ", source, flags=re.S)
    return html.unescape(re.sub(r"<[^>]*>", " ", source) + " " + attributes)


def test_templates_hold_no_untranslated_text() -> None:
    leftovers = {}
    for template in sorted(TEMPLATES_DIR.rglob("*.html")):
        words = _visible_template_text(template.read_text()).split()
        english = [
            word
            for word in words
            if re.search(r"[A-Za-z]", word) and word not in SAME_IN_EVERY_LANGUAGE and not word.startswith("/")
        ]
        if english:
            leftovers[str(template.relative_to(TEMPLATES_DIR))] = english
    assert leftovers == {}, "wrap these in {% trans %} (or _() in attributes)"


def test_the_labels_of_other_domains_are_the_texts_they_show() -> None:
    """Each list in `labels` holds its source's words, so a new status, sector or event fails here until listed."""
    assert set(labels.ENVIRONMENTS) == {environment.label for environment in Environment}
    assert set(labels.VERDICTS) == {verdict.value for verdict in Verdict}
    statuses = {"active", "revoked", "expired"} | {s.value for s in EndpointStatus} | {s.value for s in DeliveryStatus}
    assert set(Grant.model_fields["status"].annotation.__args__) <= statuses  # type: ignore[union-attr]
    assert set(labels.STATUSES) == statuses
    catalogue = packaged_catalogue()
    assert set(labels.PASSPORT_LEVELS) == {level.level for level in catalogue.levels}
    assert set(labels.PASSPORT_CHECKS) == {check.name for check in catalogue.checks}
    assert set(labels.SECTORS) == set(SECTORS.values())
    subscribable = {event.summary for event in EVENT_TYPES.values() if event.routing != "endpoint"}
    assert set(labels.EVENT_SUMMARIES) == subscribable
    legal_statuses = DutchTariefgrensOut.model_fields["legal_status"].annotation.__args__  # type: ignore[union-attr]
    assert set(labels.LEGAL_STATUSES) == {status.replace("_", " ") for status in legal_statuses}
    assert set(labels.CHANGE_CAUSES) == set(VerdictChangeCause.model_fields["what"].annotation.__args__)  # type: ignore[union-attr]


def test_numbers_amounts_and_days_are_written_as_each_language_writes_them() -> None:
    import datetime as dt

    written = {
        language.code: (
            Translator(language).number(1234567),
            Translator(language).euros(85.5),
            Translator(language).day(dt.date(2026, 3, 7)),
        )
        for language in Language
    }
    assert written["en"] == ("1,234,567", "€85.50", "Mar 7")
    assert written["nl"] == ("1.234.567", "€\xa085,50", "7 mrt")
    assert written["fr"][0].replace("\u202f", " ") == "1 234 567"
    assert written["fr"][1].replace("\xa0", " ") == "85,50 €"
    assert written["de"] == ("1.234.567", "85,50\xa0€", "7. März")


def _text_of(page: str) -> str:
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", page)).split())


def _english_sentences(language: Language) -> list[str]:
    """English message ids whose translation differs: none of them may show on a page in `language`."""
    return [
        message.id
        for message in _catalogue(language)
        if isinstance(message.id, str)
        and " " in message.id
        and "%" not in message.id
        and "<" not in message.id
        and message.string != message.id
    ]


@pytest.mark.parametrize("language", TRANSLATED, ids=lambda language: language.code)
async def test_every_page_is_in_the_language_asked_for(
    app: FastAPI, browser: AsyncClient, other_browser: AsyncClient, language: Language
) -> None:
    wanted = {"Accept-Language": f"{language.code}-BE;q=0.9, en;q=0.5"}
    english = _english_sentences(language)
    await sign_up(browser, "polyglot@example.com")
    await sign_up(other_browser, "firma@example.com", kind="business")
    pages = [(browser, path) for path in SIGNED_IN_PAGES] + [(other_browser, path) for path in SIGNED_IN_PAGES]
    signed_out = new_browser(app)
    pages += [(signed_out, path) for path in SIGNED_OUT_PAGES]
    async with signed_out:
        for client, path in pages:
            page = await client.get(path, headers=wanted)
            assert page.status_code == 200, path
            assert page.headers["content-language"] == language.code
            assert f'<html lang="{language.code}">' in page.text
            shown = _text_of(page.text)
            assert [sentence for sentence in english if sentence in shown] == [], path


async def test_the_language_follows_accept_language_then_the_switch_which_is_remembered(
    browser: AsyncClient,
) -> None:
    dutch = await browser.get("/freelancer/sign-in", headers={"Accept-Language": "nl-NL,nl;q=0.9,en;q=0.8"})
    assert "<h1>Aanmelden</h1>" in dutch.text
    assert dutch.headers["content-language"] == "nl"
    assert "Accept-Language" in dutch.headers["vary"]
    unknown = await browser.get("/freelancer/sign-in", headers={"Accept-Language": "es, pt;q=0.5"})
    assert "<h1>Sign in</h1>" in unknown.text

    switched = await browser.post(
        "/freelancer/language",
        data={"language": "fr", "next": "/freelancer/sign-in?next=/freelancer/usage", "csrf_token": csrf_of(dutch)},
    )
    assert switched.status_code == 303
    assert switched.headers["location"] == "/freelancer/sign-in?next=/freelancer/usage"
    cookie = switched.headers["set-cookie"]
    assert cookie.startswith(f"{LANGUAGE_COOKIE}=fr;")
    assert "HttpOnly" in cookie
    assert "Path=/freelancer" in cookie
    remembered = await browser.get("/freelancer/sign-in", headers={"Accept-Language": "de"})
    assert "<h1>Se connecter</h1>" in remembered.text, "the switch wins over the browser's languages"
    assert remembered.headers["content-language"] == "fr"
    assert 'value="fr" lang="fr" aria-current="true"' in remembered.text


async def test_the_switch_keeps_the_dashboard_s_csrf_rules_and_stays_on_the_dashboard(browser: AsyncClient) -> None:
    page = await browser.get("/freelancer/sign-in")
    forged = await browser.post("/freelancer/language", data={"language": "de", "next": "/freelancer/sign-in"})
    assert forged.status_code == 403
    assert LANGUAGE_COOKIE not in forged.headers.get("set-cookie", "")
    away = await browser.post(
        "/freelancer/language",
        data={"language": "de", "next": "https://evil.example/", "csrf_token": csrf_of(page)},
    )
    assert away.status_code == 303
    assert away.headers["location"] == "/freelancer/api-tokens"
    nonsense = await browser.post(
        "/freelancer/language", data={"language": "xx", "next": "/freelancer/sign-in", "csrf_token": csrf_of(page)}
    )
    assert nonsense.status_code == 303
    assert LANGUAGE_COOKIE not in nonsense.headers.get("set-cookie", "")


async def test_notices_form_errors_and_the_reset_mail_are_translated(
    browser: AsyncClient, mailer: RecordingMailer, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await sign_up(browser, "fr@example.com")
    page = await browser.get("/freelancer/sign-in")
    await browser.post(
        "/freelancer/language", data={"language": "fr", "next": "/freelancer/sign-in", "csrf_token": csrf_of(page)}
    )
    shown = await browser.get("/freelancer/api-tokens")
    signed_out = await browser.post("/freelancer/sign-out", data={"csrf_token": csrf_of(shown)})
    assert "Vous êtes déconnecté." in (await browser.get(signed_out.headers["location"])).text
    wrong = await sign_in(browser, "fr@example.com", "not the password")
    assert wrong.status_code == 400
    assert "L&#39;adresse e-mail ou le mot de passe est incorrect." in wrong.text
    short = await post_form(
        browser, "/freelancer/sign-up", {"email": "x@example.com", "password": "short", "kind": "x"}
    )
    assert "Choisissez un type de compte." in short.text
    weak = await post_form(
        browser, "/freelancer/sign-up", {"email": "x@example.com", "password": "short", "kind": "business"}
    )
    assert "Utilisez au moins 10 caractères." in weak.text
    await post_form(browser, "/freelancer/reset-password", {"email": "fr@example.com"})
    [mail] = mailer.sent
    assert mail["subject"] == "Définissez votre mot de passe compliance-api"
    assert mail["body"].startswith("Quelqu'un a demandé à définir un nouveau mot de passe pour fr@example.com")
    assert "http://api.test/freelancer/reset-password/confirm?token=" in mail["body"]
