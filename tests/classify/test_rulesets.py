"""Ruleset files are validated when loaded: a broken file is refused with its name and the offending field."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from compliance_api import app as app_module
from compliance_api.classify import ruleset as ruleset_module
from compliance_api.classify.language import Language
from compliance_api.classify.ruleset import (
    CROSS_BORDER_FILES,
    DUTCH_FILE,
    RulesetError,
    load_rulesets,
    packaged_rulesets,
)
from compliance_api.classify.verdict import Country
from compliance_api.config import Settings
from tests.cli.conftest import invoke
from tests.conftest import running_app

Edit = Callable[[dict[str, Any]], None]


@pytest.fixture
def ruleset_dir(tmp_path: Path) -> Path:
    source = Path(str(resources.files("compliance_api.classify") / "rulesets"))
    target = tmp_path / "rulesets"
    shutil.copytree(source, target)
    return target


def edit(folder: Path, name: str, change: Edit) -> None:
    path = folder / name
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_the_packaged_rulesets_load(ruleset_dir: Path) -> None:
    rulesets = load_rulesets(ruleset_dir)
    assert rulesets.dutch.id == "nl-zw"
    assert set(rulesets.cross_border) == set(Country)
    assert [entry.amount_eur for entry in rulesets.dutch.tariefgrens] == sorted(
        entry.amount_eur for entry in rulesets.dutch.tariefgrens
    )


def test_every_source_note_says_which_reading_is_the_services_own(ruleset_dir: Path) -> None:
    rulesets = load_rulesets(ruleset_dir)
    for ruleset in (rulesets.dutch, *rulesets.cross_border.values()):
        assert "this service's own" in ruleset.source_note[Language.en], ruleset.id


def _set(path: str, value: Any) -> Edit:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value

    return change


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        (DUTCH_FILE, _set("criteria.0.weight", 21), "weights must add up to 100"),
        (DUTCH_FILE, _set("criteria.0.weight", "heavy"), "criteria.0.weight"),
        (DUTCH_FILE, _set("criteria.2.input", "salary"), "criteria.2.input"),
        (DUTCH_FILE, _set("criteria.1.source_url", "not a url"), "criteria.1.source_url"),
        (DUTCH_FILE, _set("tariefgrens.1.valid_from", "2020-01-01"), "ascending"),
        (DUTCH_FILE, _set("tariefgrens.3.legal_status", "rumoured"), "tariefgrens.3.legal_status"),
        (DUTCH_FILE, _set("criteria.3.hit_when", {"op": "at_most_tariefgrens"}), "only the hourly rate"),
        (DUTCH_FILE, _set("surprise", True), "surprise"),
        (CROSS_BORDER_FILES[Country.FR], _set("rules.0.all_of", ["client_gives_orders", "typo"]), "rules.0"),
        (CROSS_BORDER_FILES[Country.DE], _set("rules.1.at_least", 9), "at_least"),
        (CROSS_BORDER_FILES[Country.BE], _set("decisive.0.at_least", 9), "at_least"),
        (CROSS_BORDER_FILES[Country.FR], _set("decisive.0.all_of", [{"input": "typo", "is": True}]), "decisive.0"),
        (CROSS_BORDER_FILES[Country.DE], _set("decisive.0.verdict", "risky"), "decisive"),
        (CROSS_BORDER_FILES[Country.BE], _set("decisive.0.rebutted_by", ["authority_in_fact"]), "rebutted_by"),
        (
            CROSS_BORDER_FILES[Country.FR],
            _set("decisive.0.all_of", [{"input": "client_gives_orders", "at_least": 1}]),
            "use `is`",
        ),
        (DUTCH_FILE, _set("decisive.0.all_of", [{"input": "salary", "is": True}]), "decisive.0"),
        (DUTCH_FILE, _set("decisive.0.all_of", [{"input": "profit_risk", "is": True, "at_least": 1}]), "exactly one"),
        (DUTCH_FILE, _set("questions.0.input", "months_duration"), "questions"),
        (DUTCH_FILE, _set("questions.0.text", {"en": "only English"}), "missing translation"),
        (CROSS_BORDER_FILES[Country.BE], _set("advice", {"safe": "x"}), "advice"),
        (CROSS_BORDER_FILES[Country.BE], _set("country", "FR"), "country"),
        (CROSS_BORDER_FILES[Country.FR], _set("criteria.1.name", "not_registered_as_independent"), "unique"),
    ],
)
def test_a_broken_file_is_refused_naming_file_and_field(
    ruleset_dir: Path, name: str, change: Edit, message: str
) -> None:
    edit(ruleset_dir, name, change)
    with pytest.raises(RulesetError) as raised:
        load_rulesets(ruleset_dir)
    assert name in str(raised.value)
    assert message in str(raised.value)


def test_a_missing_or_unparseable_file_is_refused(ruleset_dir: Path) -> None:
    (ruleset_dir / CROSS_BORDER_FILES[Country.DE]).write_text("{not json")
    with pytest.raises(RulesetError, match=CROSS_BORDER_FILES[Country.DE]):
        load_rulesets(ruleset_dir)
    (ruleset_dir / DUTCH_FILE).unlink()
    with pytest.raises(RulesetError, match=f"{DUTCH_FILE}: cannot be read"):
        load_rulesets(ruleset_dir)


def test_the_check_command_names_the_broken_file(ruleset_dir: Path) -> None:
    code, out, _ = invoke({}, "rulesets", "check", "--dir", str(ruleset_dir), "--json")
    assert code == 0
    assert {entry["id"] for entry in json.loads(out)["rulesets"]} == {
        "nl-zw",
        "fr-subordination",
        "de-scheinselbstaendigkeit",
        "be-arbeidsrelatiewet",
    }
    edit(ruleset_dir, DUTCH_FILE, _set("criteria.0.weight", -1))
    code, _, err = invoke({}, "rulesets", "check", "--dir", str(ruleset_dir))
    assert code == 1
    assert err.startswith(f"error: ruleset {DUTCH_FILE}: criteria.0.weight")


@pytest.fixture
def packaged_from_ruleset_dir(monkeypatch: pytest.MonkeyPatch, ruleset_dir: Path) -> Path:
    """Make the app's start read its packaged rulesets from `ruleset_dir`. The per-process cache is bypassed (not
    cleared), so the other tests keep the rulesets they loaded."""
    monkeypatch.setattr(ruleset_module, "resources", SimpleNamespace(files=lambda _package: ruleset_dir.parent))
    monkeypatch.setattr(app_module, "packaged_rulesets", packaged_rulesets.__wrapped__)
    return ruleset_dir


@pytest.mark.parametrize(
    ("name", "change", "field"),
    [
        (DUTCH_FILE, _set("criteria.0.weight", "heavy"), "criteria.0.weight"),
        (DUTCH_FILE, _set("tariefgrens.2.legal_status", "rumoured"), "tariefgrens.2.legal_status"),
        (CROSS_BORDER_FILES[Country.DE], _set("tariefgrens.1.value", 0), "tariefgrens.1.value"),
        (CROSS_BORDER_FILES[Country.BE], _set("criteria.4.source_url", "not a url"), "criteria.4.source_url"),
    ],
)
async def test_a_broken_file_stops_the_app_from_starting_naming_file_and_field(
    settings: Settings, engine: object, packaged_from_ruleset_dir: Path, name: str, change: Edit, field: str
) -> None:
    """The real start path (create_app -> build_services -> packaged_rulesets) with one packaged file broken."""
    async with running_app(settings) as started:
        assert started.state.services.rulesets.dutch.id == "nl-zw"
    edit(packaged_from_ruleset_dir, name, change)
    with pytest.raises(RulesetError) as raised:
        async with running_app(settings):
            pytest.fail("the app started with a broken ruleset file")
    assert str(raised.value).startswith(f"ruleset {name}: {field}: ")


def _drop(path: str) -> Edit:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        del node[last]

    return change


@pytest.mark.parametrize(
    ("name", "change", "field", "message"),
    [
        (DUTCH_FILE, _drop("criteria.0.advice.fr"), "criteria.0.advice", "missing translation: fr"),
        (DUTCH_FILE, _drop("texts.not_assessed.de"), "texts.not_assessed", "missing translation: de"),
        (DUTCH_FILE, _drop("tariefgrens.2.basis.nl"), "tariefgrens.2.basis", "missing translation: nl"),
        (DUTCH_FILE, _drop("texts.legal_status.bill.en"), "texts.legal_status.bill", "missing translation: en"),
        (CROSS_BORDER_FILES[Country.FR], _drop("rules.0.reason.de"), "rules.0.reason", "missing translation: de"),
        (
            CROSS_BORDER_FILES[Country.DE],
            _drop("criteria.3.description.nl"),
            "criteria.3.description",
            "missing translation: nl",
        ),
        (CROSS_BORDER_FILES[Country.BE], _drop("advice.safe.fr"), "advice.safe", "missing translation: fr"),
        (
            CROSS_BORDER_FILES[Country.BE],
            _set("texts.rule_applied.es", "Regla aplicada: {reason}."),
            "texts.rule_applied",
            "unknown language: es",
        ),
        (
            CROSS_BORDER_FILES[Country.FR],
            _set("texts.unanswered.fr", "Non renseignés : {champs}."),
            "texts",
            "unanswered.fr: placeholders must be questions",
        ),
        (
            DUTCH_FILE,
            _set("texts.threshold_used.nl", "Gebruikte tariefgrens: EUR {amount} vanaf {valid_from} ({status})."),
            "texts",
            "threshold_used.nl: placeholder {basis} is missing",
        ),
    ],
)
async def test_a_missing_translation_stops_the_start_naming_file_field_and_language(
    settings: Settings,
    engine: object,
    packaged_from_ruleset_dir: Path,
    name: str,
    change: Edit,
    field: str,
    message: str,
) -> None:
    """Each text is given in en, nl, fr and de; a gap (or a template a language fills differently) is found when the
    service starts, not when a caller first asks in that language."""
    edit(packaged_from_ruleset_dir, name, change)
    with pytest.raises(RulesetError) as raised:
        async with running_app(settings):
            pytest.fail("the app started with a missing translation")
    assert str(raised.value).startswith(f"ruleset {name}: {field}: ")
    assert message in str(raised.value)


def test_every_text_is_translated_and_differs_from_english(ruleset_dir: Path) -> None:
    """No translation was left as a copy of the English text (legal terms stay, whole sentences do not)."""
    rulesets = load_rulesets(ruleset_dir)
    texts: list[tuple[str, ...]] = [c.advice for c in rulesets.dutch.criteria]
    texts += [rulesets.dutch.texts.not_assessed, *(entry.basis for entry in rulesets.dutch.tariefgrens)]
    for ruleset in rulesets.cross_border.values():
        texts += [c.advice for c in ruleset.criteria] + [c.description for c in ruleset.criteria]
        texts += [r.reason for r in ruleset.rules] + list(ruleset.advice.values())
    for translations in texts:
        assert len(set(translations)) == 4, translations


def test_the_belgian_rules_say_how_actual_authority_weighs_and_cite_the_programme_law() -> None:
    note = packaged_rulesets().cross_border[Country.BE].source_note[Language.en]
    assert "can be exercised over the work therefore outweighs a written self-employed qualification" in note
    assert "Title XIII of the Programme Law (I) of 27 December 2006" in note
