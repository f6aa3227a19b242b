"""The operator's guide stays complete: every setting the service reads is documented in docs/operate/deploy.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import AliasChoices

from compliance_api.config import Settings
from compliance_api.openapi.frozen import frozen_versions

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


CLIENT_PACKAGE = re.compile(r"compliance[_-]api[_-]client-(?P<version>[0-9][0-9.]*[0-9])(?:-py3-none-any\.whl|\.tgz)")


def test_the_client_packages_are_named_by_the_newest_frozen_contract() -> None:
    """`make clients` versions the wheel and the npm package by the newest contract's date (clients/generate.sh):
    2026-11-28 → 2026.11.28. The README and the guide name the packages it builds now."""
    newest = frozen_versions()[-1]
    version = ".".join(str(int(part)) for part in newest.split("-"))
    root = Path(__file__).resolve().parents[1]
    named = {
        (path.relative_to(root).as_posix(), found.group(0))
        for path in (root / "README.md", *sorted((root / "docs").rglob("*.md")))
        for found in CLIENT_PACKAGE.finditer(path.read_text())
    }
    assert named, "the guide names the packages"
    assert {(path, name) for path, name in named if version not in name} == set(), f"name them {version}"


OUTSIDE_DOCUMENTS = re.compile(r"DESIGN §|\bdomain/|\b(?:nl|eu|api|STYLE)\.md\b|\.\./shared|\b[Ss]pec (?:section )?\d")
# Pointers at the work around the repository rather than at the repository: tickets ("issue 4", "(issue: Foundation)",
# "issue figure", "issue's"), the assignment ("the brief", "briefed", also inside a test's name), the stretches of
# work ("next session", "this session's machine") and the people ("the lead", "other engineers"). "issued",
# "issuer" and "issue_" (passports are issued) are words of the domain and do not match.
OUTSIDE_WORK = re.compile(
    r"\bissues?\s+#?\d+|\(issue\b|\bissue(?:'s\b|\s+figure|:)"
    r"|(?<![^\W_])brief(?:ed)?(?![^\W_])"
    r"|\b(?:next|this|last|previous|earlier)\s+session\b"
    r"|\bthe\s+lead\b|\bother\s+engineers\b",
    re.IGNORECASE,
)
TEXT_SUFFIXES = {".py", ".md", ".json", ".html", ".yml", ".toml", ".csv", ".lua", ".ini", ".txt"}


def _outside_references(text: str) -> list[str]:
    return [match.group(0) for pattern in (OUTSIDE_DOCUMENTS, OUTSIDE_WORK) for match in pattern.finditer(text)]


def test_no_text_refers_to_documents_outside_the_repository() -> None:
    """The repository is self-contained: its README, guide, code, contract, benchmarks and tests cite only what is in
    it, and say what they mean instead of pointing at a ticket, an assignment, a stretch of work or a person."""
    root = Path(__file__).resolve().parents[1]
    files = [root / name for name in ("README.md", "CHANGELOG.md", "mkdocs.yml", "Makefile")]
    for folder in ("compliance_api", "docs", "bench", "tests"):
        files += [p for p in (root / folder).rglob("*") if p.suffix in TEXT_SUFFIXES and "guide_site" not in p.parts]
    this_file = Path(__file__).resolve()
    offenders = [
        f"{path.relative_to(root)}: {found}"
        for path in files
        if path.resolve() != this_file
        for found in _outside_references(path.read_text(errors="replace"))
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "text",
    [
        "Target (issue figure): p99 <= 20 ms.",
        "## WTTA register cache at 1,000,000 rows (issue 4), 2026-11-23",
        "Issue 3 asks for a ratio of 0.6.",
        "see issues 3 and 4",
        "what authentication costs (issue: Foundation)",
        "## `make test` on a fresh clone (issue 16's figure)",
        "the issue's target",
        "the worked cases of the brief",
        "the NL brief (§5.1)",
        "def test_packaged_catalogue_publishes_the_briefed_checks() -> None:",
        "2026-11-23, next session",
        "measured on this session's machine",
        "an A/B run of last session's commit",
        "on the previous session's machine",
        "in an earlier session",
        "on fef3ef0 + the lead's uncommitted work",
        "two other engineers' jobs running",
        "a pointer wrapped over lines: next\n    session",
    ],
)
def test_the_guard_catches_pointers_outside_the_repository(text: str) -> None:
    assert _outside_references(text) != []


@pytest.mark.parametrize(
    "text",
    [
        "passport.issued_at",
        "assert passport.issued_at <= now",
        "the issuer signs the body",
        "issue_passport(session, user)",
        "passports are issued once a check is verified",
        "a session cookie; the session ends at sign-out",
    ],
)
def test_the_guard_lets_the_domain_words_through(text: str) -> None:
    assert _outside_references(text) == []
