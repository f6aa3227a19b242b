from __future__ import annotations

import pytest

from compliance_api.kit.addresses import (
    Bases,
    listening_bases,
    listening_url,
    public_base_url,
    request_base_url,
    request_bases,
)


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


HOSTS = ("sandbox.localhost",)


def test_the_sandbox_is_reached_at_its_port_from_the_address_a_request_came_in_on() -> None:
    on_production = {"server": ("10.0.0.5", 8000), "scheme": "http"}
    assert request_bases(on_production, "", 8001, HOSTS) == Bases("http://10.0.0.5:8000", "http://10.0.0.5:8001")
    on_sandbox = {"server": ("10.0.0.5", 8001), "scheme": "http"}
    assert request_bases(on_sandbox, "", 8001, HOSTS) == Bases(None, "http://10.0.0.5:8001")


def test_without_a_sandbox_port_or_behind_a_public_url_the_sandbox_host_names_the_sandbox() -> None:
    scope = {"server": ("127.0.0.1", 8000), "scheme": "http"}
    assert request_bases(scope, "", None, HOSTS) == Bases("http://127.0.0.1:8000", "http://sandbox.localhost:8000")
    assert request_bases(scope, "https://api.example.com", 8001, ("sandbox.example.com",)) == Bases(
        "https://api.example.com", "https://sandbox.example.com"
    )
    assert request_bases(scope, "", None, ()) == Bases("http://127.0.0.1:8000", None)


def test_printed_links_name_the_sandbox_port_of_the_server_they_are_for() -> None:
    assert listening_bases("", "0.0.0.0", 8010, 8011, HOSTS) == Bases("http://127.0.0.1:8010", "http://127.0.0.1:8011")
    assert listening_bases("", "127.0.0.1", 8010, None, HOSTS) == Bases(
        "http://127.0.0.1:8010", "http://sandbox.localhost:8010"
    )
