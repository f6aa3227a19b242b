"""The operator's guide stays complete: every setting the service reads is documented in docs/operate/deploy.md."""

from __future__ import annotations

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
