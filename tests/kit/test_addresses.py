from __future__ import annotations

import pytest

from compliance_api.kit.addresses import listening_url, public_base_url, request_base_url


@pytest.mark.parametrize(
    ("host", "port", "url"),
    [
        ("127.0.0.1", 8010, "http://127.0.0.1:8010"),
        ("0.0.0.0", 8000, "http://127.0.0.1:8000"),
        ("::", 8000, "http://[::1]:8000"),
        ("::1", 80, "http://[::1]"),
        ("localhost", 9000, "http://localhost:9000"),
    ],
)
def test_listening_url_reaches_the_bound_address_from_this_machine(host: str, port: int, url: str) -> None:
    assert listening_url(host, port) == url


def test_a_configured_public_base_url_wins() -> None:
    assert public_base_url("https://api.example.com/", "0.0.0.0", 8010) == "https://api.example.com"
    assert public_base_url("", "0.0.0.0", 8010) == "http://127.0.0.1:8010"
    scope = {"server": ("10.0.0.5", 8000), "scheme": "http"}
    assert request_base_url(scope, "https://api.example.com/") == "https://api.example.com"
    assert request_base_url(scope, "") == "http://10.0.0.5:8000"
    assert request_base_url({"server": ("::1", 443), "scheme": "https"}, "") == "https://[::1]"
