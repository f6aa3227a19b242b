"""The operator's guide stays complete: every setting the service reads is documented in docs/operate/deploy.md."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import AliasChoices

from compliance_api.config import Settings

DEPLOY_GUIDE = Path(__file__).resolve().parents[1] / "docs" / "operate" / "deploy.md"


def _variables() -> list[str]:
    names = []
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        names += [str(choice) for choice in alias.choices] if isinstance(alias, AliasChoices) else [name.upper()]
    return names


def test_every_setting_is_in_the_deploy_guide() -> None:
    guide = DEPLOY_GUIDE.read_text()
    missing = [name for name in _variables() if f"`{name}`" not in guide]
    assert not missing, f"document these settings in docs/operate/deploy.md: {missing}"


def test_the_guide_has_no_placeholders_left() -> None:
    guide = DEPLOY_GUIDE.read_text()
    assert "SETTINGS_TABLE" not in guide
    assert "SECRET_ROTATION" not in guide


OUTSIDE_DOCUMENTS = re.compile(r"DESIGN §|\bdomain/|\b(?:nl|eu|api|STYLE)\.md\b|\.\./shared|\b[Ss]pec (?:section )?\d")
TEXT_SUFFIXES = {".py", ".md", ".json", ".html", ".yml", ".toml", ".csv", ".lua", ".ini", ".txt"}


def test_no_text_refers_to_documents_outside_the_repository() -> None:
    """The repository is self-contained: its README, guide, code and contract cite only what is in it."""
    root = Path(__file__).resolve().parents[1]
    files = [root / name for name in ("README.md", "CHANGELOG.md", "mkdocs.yml", "Makefile")]
    for folder in ("compliance_api", "docs", "bench", "tests"):
        files += [p for p in (root / folder).rglob("*") if p.suffix in TEXT_SUFFIXES and "guide_site" not in p.parts]
    this_file = Path(__file__).resolve()
    offenders = [
        f"{path.relative_to(root)}: {match.group(0)}"
        for path in files
        if path.resolve() != this_file
        for match in OUTSIDE_DOCUMENTS.finditer(path.read_text(errors="replace"))
    ]
    assert offenders == []
