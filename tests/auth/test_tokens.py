from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from compliance_api.auth import tokens
from compliance_api.kit.environment import Environment


def test_generated_tokens_parse_back_to_their_environment() -> None:
    for environment in Environment:
        token = tokens.generate(environment)
        assert re.fullmatch(tokens.TOKEN_PATTERN, token)
        parsed = tokens.parse(token)
        assert parsed is not None
        assert parsed.environment is environment
        assert parsed.last4 == token[-4:]


def test_tokens_are_unique() -> None:
    assert len({tokens.generate(Environment.live) for _ in range(1000)}) == 1000


@given(position=st.integers(min_value=8, max_value=tokens.TOKEN_LENGTH - 1), replacement=st.sampled_from(tokens.BASE62))
def test_any_single_character_typo_fails_the_checksum(position: int, replacement: str) -> None:
    token = tokens.generate(Environment.test)
    if token[position] == replacement:
        return
    mistyped = token[:position] + replacement + token[position + 1 :]
    assert tokens.parse(mistyped) is None


def test_swapping_the_prefix_breaks_the_checksum() -> None:
    token = tokens.generate(Environment.test)
    assert tokens.parse("sk_live_" + token[8:]) is None


def test_malformed_candidates_are_refused() -> None:
    token = tokens.generate(Environment.live)
    for candidate in ("", token[:-1], token + "a", "pk_live_" + token[8:], token[:20] + "-" + token[21:], "é" * 46):
        assert tokens.parse(candidate) is None


def test_hash_is_keyed_by_the_pepper() -> None:
    token = tokens.generate(Environment.live)
    assert tokens.hash_token(token, b"a" * 32) != tokens.hash_token(token, b"b" * 32)
    assert token not in tokens.hash_token(token, b"a" * 32)
