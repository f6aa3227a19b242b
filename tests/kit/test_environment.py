from __future__ import annotations

import pytest

from compliance_api.kit.environment import Environment, InvalidHost, environment_for_host

SANDBOX = ("sandbox.localhost", "sandbox.example.com")


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("sandbox.localhost", Environment.test),
        ("sandbox.localhost:8000", Environment.test),
        ("SANDBOX.LOCALHOST", Environment.test),
        ("sandbox.example.com.", Environment.test),
        ("api.example.com", Environment.live),
        ("127.0.0.1:8000", Environment.live),
        ("[::1]:8000", Environment.live),
        ("", Environment.live),
        ("sandbox.localhost.evil.com", Environment.live),
        ("evil-sandbox.localhost", Environment.live),
    ],
)
def test_host_decides_the_environment(host: str, expected: Environment) -> None:
    assert environment_for_host(host, SANDBOX) is expected


@pytest.mark.parametrize(
    "host",
    ["sandbox.localhost:abc", "sandbox.localhost:65536", "sandbox.localhost:99999999", "a:1:2", "sandbox.localhost/x"],
)
def test_an_invalid_host_decides_no_environment(host: str) -> None:
    with pytest.raises(InvalidHost):
        environment_for_host(host, SANDBOX)
