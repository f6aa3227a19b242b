"""The `Dockerfile` and `compose.yaml` say what the operator's guide promises ("Containers" in docs/operate/deploy.md).
CI builds the image and runs the compose file for real (`.ci/image.sh`); these checks fail fast on an edit that
drops a promise the smoke test would not notice (the non-root user, a health check, a volume, an image variable)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # PyYAML ships no types

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
GUIDE = (ROOT / "docs" / "operate" / "deploy.md").read_text()
IMAGE_SCRIPT = (ROOT / ".ci" / "image.sh").read_text()


def test_the_image_is_multi_stage_non_root_healthchecked_and_production_by_default() -> None:
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.11-slim-bookworm$", DOCKERFILE, re.MULTILINE)
    assert len(re.findall(r"^FROM \$\{PYTHON_IMAGE\}", DOCKERFILE, re.MULTILINE)) == 2
    assert "COPY --from=build" in DOCKERFILE
    users = re.findall(r"^USER (\S+)$", DOCKERFILE, re.MULTILINE)
    assert users
    assert users[-1] not in ("root", "0")
    assert "HEALTHCHECK" in DOCKERFILE
    assert "/livez" in DOCKERFILE
    assert "COMPLIANCE_DEPLOYMENT=production" in DOCKERFILE
    assert re.search(r'^ENTRYPOINT \["compliance-api"\]$', DOCKERFILE, re.MULTILINE)
    assert re.search(r'^CMD \["serve"', DOCKERFILE, re.MULTILINE)


def test_compose_runs_the_whole_deployment_from_one_image() -> None:
    assert set(SERVICES) == {"postgres", "redis", "migrate", "api-1", "api-2", "worker"}
    app = {name: SERVICES[name] for name in ("migrate", "api-1", "api-2", "worker")}
    assert {service["image"] for service in app.values()} == {"${COMPLIANCE_IMAGE:-compliance-api:latest}"}
    assert SERVICES["postgres"]["image"] == "${POSTGRES_IMAGE:-postgres:16}"
    assert SERVICES["redis"]["image"] == "${REDIS_IMAGE:-redis:7}"
    assert SERVICES["worker"]["command"][0] == "worker"
    assert "compliance-api migrate" in SERVICES["migrate"]["command"][0]


def test_every_long_running_service_is_health_checked_and_ordered_after_its_dependencies() -> None:
    for name in ("postgres", "redis", "worker"):
        assert SERVICES[name]["healthcheck"]["test"], f"{name} has a health check"
    assert SERVICES["migrate"]["healthcheck"] == {"disable": True}
    assert SERVICES["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert "healthcheck" not in SERVICES["api-1"], "the API processes keep the image's own health check"
    assert "healthcheck" not in SERVICES["api-2"]
    for name in ("api-1", "api-2", "worker"):
        assert SERVICES[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert SERVICES[name]["depends_on"]["redis"] == {"condition": "service_healthy"}


def test_state_lives_in_volumes_and_secrets_are_required_not_defaulted() -> None:
    assert set(COMPOSE["volumes"]) == {"postgres", "redis", "keys"}
    assert "postgres:/var/lib/postgresql/data" in SERVICES["postgres"]["volumes"]
    assert "redis:/data" in SERVICES["redis"]["volumes"]
    for name in ("migrate", "api-1", "api-2", "worker"):
        assert "keys:/var/lib/compliance-api/keys" in SERVICES[name]["volumes"]
        environment = SERVICES[name]["environment"]
        assert environment["COMPLIANCE_SECRET_KEY"].startswith("${COMPLIANCE_SECRET_KEY:?")
        assert "${POSTGRES_PASSWORD:?" in environment["DATABASE_URL"]


def test_the_guide_names_the_compose_program_ci_runs_and_why() -> None:
    """The guide's account of CI's smoke test names the compose program `.ci/image.sh` runs, and why it is not
    podman-compose when it is not."""
    program = re.search(r"^compose\(\) \{ (\S+) ", IMAGE_SCRIPT, re.MULTILINE)
    assert program, "the script runs compose through its `compose` function"
    ci = next(paragraph for paragraph in GUIDE.split("\n\n") if paragraph.startswith("CI builds the image"))
    assert f"`{program.group(1)}`" in ci
    if program.group(1) != "podman-compose":
        assert "`condition: service_healthy`" in ci
