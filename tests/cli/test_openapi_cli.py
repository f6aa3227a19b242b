"""`compliance-api openapi --check` and `openapi diff`: the CI gate against breaking the frozen contracts."""

from __future__ import annotations

import json
from copy import deepcopy
from pathlib import Path
from typing import Any

import pytest

from compliance_api import CONTRACT_VERSION
from compliance_api.cli import openapi as openapi_cli
from compliance_api.openapi.frozen import frozen_contract
from tests.cli.conftest import invoke


def _frozen() -> dict[str, Any]:
    contract = frozen_contract(CONTRACT_VERSION)
    assert contract is not None
    return deepcopy(contract)


def _without_health(contract: dict[str, Any]) -> dict[str, Any]:
    contract["paths"].pop("/v1/health")
    return contract


def test_check_passes_on_the_current_tree() -> None:
    code, out, err = invoke({}, "openapi", "--check")
    assert code == 0, err
    assert f"frozen as {CONTRACT_VERSION}" in out


def test_check_fails_on_a_breaking_change_and_says_how_to_freeze(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openapi_cli, "generated_contract", lambda: _without_health(_frozen()))
    code, _, err = invoke({}, "openapi", "--check")
    assert code == 1
    assert "operation_removed: GET /v1/health" in err
    assert "openapi --write" in err


def test_check_fails_when_additions_are_not_frozen_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    grown = _frozen()
    grown["paths"]["/v1/new-thing"] = {"get": {"responses": {"200": {"description": "ok"}}}}
    monkeypatch.setattr(openapi_cli, "generated_contract", lambda: grown)
    code, _, err = invoke({}, "openapi", "--check")
    assert code == 1
    assert "not frozen yet" in err
    assert "operation_removed" not in err


def test_write_refuses_to_rewrite_a_dated_contract_with_a_breaking_change(monkeypatch: pytest.MonkeyPatch) -> None:
    before = frozen_contract(CONTRACT_VERSION)
    monkeypatch.setattr(openapi_cli, "generated_contract", lambda: _without_health(_frozen()))
    code, _, err = invoke({}, "openapi", "--write")
    assert code == 1
    assert "refusing to rewrite" in err
    assert frozen_contract(CONTRACT_VERSION) == before


def test_diff_lists_breaking_changes_between_two_files(tmp_path: Path) -> None:
    old, new, same = tmp_path / "old.json", tmp_path / "new.json", tmp_path / "same.json"
    old.write_text(json.dumps(_frozen()))
    new.write_text(json.dumps(_without_health(_frozen())))
    same.write_text(json.dumps(_frozen()))
    code, _, err = invoke({}, "openapi", "diff", str(old), str(new))
    assert code == 1
    assert "operation_removed: GET /v1/health" in err
    code, out, _ = invoke({}, "openapi", "diff", str(old), str(same))
    assert code == 0
    assert "no breaking change" in out
    code, out, _ = invoke({}, "openapi", "diff", str(new), str(old))  # adding an operation breaks nothing
    assert code == 0


def test_diff_of_a_file_that_is_not_a_contract_is_a_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    code, _, err = invoke({}, "openapi", "diff", str(broken), str(broken))
    assert code == 2
    assert "cannot compare" in err


def test_plain_openapi_still_prints_the_contract() -> None:
    code, out, _ = invoke({}, "openapi")
    assert code == 0
    assert json.loads(out) == frozen_contract(CONTRACT_VERSION)


def test_a_breaking_change_passes_once_a_new_dated_contract_is_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same break as above, with CONTRACT_VERSION moved to a new date and that contract frozen."""
    broken = _without_health(_frozen())
    frozen = {CONTRACT_VERSION: _frozen(), "2099-01-01": broken}
    monkeypatch.setattr(openapi_cli, "CONTRACT_VERSION", "2099-01-01")
    monkeypatch.setattr(openapi_cli, "frozen_versions", lambda: sorted(frozen))
    monkeypatch.setattr(openapi_cli, "frozen_contract", frozen.get)
    monkeypatch.setattr(openapi_cli, "generated_contract", lambda: broken)
    code, out, err = invoke({}, "openapi", "--check")
    assert code == 0, err
    assert "frozen as 2099-01-01 (2 frozen contracts)" in out


def test_check_refuses_a_contract_version_older_than_the_newest_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openapi_cli, "CONTRACT_VERSION", "2020-01-01")
    code, _, err = invoke({}, "openapi", "--check")
    assert code == 1
    assert "older than the newest frozen" in err
