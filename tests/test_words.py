"""The words guard catches each kind of fault it is there for, and passes the texts it should."""

from __future__ import annotations

import pytest

from compliance_api.classify.language import Language
from tests.words import citation_faults, faults, url_faults


@pytest.mark.parametrize(
    ("text", "language", "kind"),
    [
        ("VERIFY, not checkable with the sources found: the reading is ours.", Language.en, "work note"),
        ("De officiële tekst was niet beschikbaar voor de searches made.", Language.nl, "work note"),
        ("Niet beantwoord, en daarom niet meegeteld: hourly_rate_eur, profit_risk.", Language.nl, "code in prose"),
        ("Le tarif horaire est inférieur au tariefgrens_min_eur renvoyé.", Language.fr, "code in prose"),
        ("Afhankelijk van deze antwoorden kan het oordeel variëren van safe tot unsafe.", Language.nl, "verdict code"),
        ("Our benchmark: a fee near the minimum wage cannot fund own social provision.", Language.de, "English"),
        (
            "Het tarief is te laag. The client must rebut the presumption before the engagement starts.",
            Language.nl,
            "English",
        ),
    ],
)
def test_the_guard_finds_each_kind_of_fault(text: str, language: Language, kind: str) -> None:
    assert any(kind in fault for fault in faults(text, language)), faults(text, language)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Afhankelijk van deze antwoorden kan het oordeel uitkomen tussen veilig en onveilig.", Language.nl),
        ("Le prestataire est-il immatriculé pour cette activité (RCS, répertoire des métiers, URSSAF) ?", Language.fr),
        ("Kann der Auftraggeber Zeit, Ort, Dauer und Art der Ausführung bestimmen?", Language.de),
        ("The client can verify the signature with the published keys.", Language.en),
    ],
)
def test_the_guard_passes_what_is_written_for_the_reader(text: str, language: Language) -> None:
    assert faults(text, language) == []


def test_a_citation_may_keep_its_own_language_but_is_never_english_prose() -> None:
    assert citation_faults("HR 24 maart 2023, ECLI:NL:HR:2023:443 (Deliveroo), r.o. 3.2.5 onder (viii)") == []
    assert citation_faults("BSG, Urteil vom 28.06.2022 – B 12 R 3/20 R (Herrenberg)") == []
    assert citation_faults("Hourly-rate presumption act (EUR 38 or less, passed by the senate in June)")
    assert citation_faults("Deliveroo factor 8 (commercial risk); works_for_own_account")


@pytest.mark.parametrize(
    "url",
    [
        "https://uitspraken.rechtspraak.nl/details?id=ECLI:NL:HR:2023:443",
        "https://wetten.overheid.nl/jci1.3:c:BWBR0005290&boek=7&titeldeel=10&artikel=610",
        "https://www.legifrance.gouv.fr/juri/id/JURITEXT000037787075",
        "https://www.gesetze-im-internet.de/sgb_4/__7.html",
        "https://www.sozialgerichtsbarkeit.de/node/172232",
        "https://eur-lex.europa.eu/eli/dir/2021/514/oj",
    ],
)
def test_an_official_address_of_one_text_passes(url: str) -> None:
    assert url_faults(url) == []


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://freelance.com/risques-juridiques-fournisseurs/risque-de-requalification", "not an official"),
        ("https://spee-advocaten.nl/en/?p=6020", "not an official"),
        ("http://uitspraken.rechtspraak.nl/details?id=ECLI:NL:HR:2023:443", "not an official"),
        ("https://www.legifrance.gouv.fr/", "names no specific text"),
        ("https://uitspraken.rechtspraak.nl/", "names no specific text"),
        ("https://www.gesetze-im-internet.de/sgb_4/index.html", "names no specific text"),
    ],
)
def test_an_address_elsewhere_or_of_no_text_fails(url: str, kind: str) -> None:
    assert any(kind in fault for fault in url_faults(url)), url_faults(url)
