"""A short-lived in-process cache of resolved tokens, so the hot path rarely touches the database.

Entries live at most `ttl` seconds (≤ 5), which bounds how long a revocation made anywhere (another worker, the
CLI) can go unnoticed here. Unknown hashes are cached too, so a flood of well-formed but unknown tokens costs one
query per distinct token per TTL.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from compliance_api.auth.service import TokenRecord


class TokenCache:
    def __init__(self, ttl_seconds: float, max_entries: int = 50_000) -> None:
        self._ttl = ttl_seconds
        self._max = max_entries
        self._entries: OrderedDict[str, tuple[float, TokenRecord | None]] = OrderedDict()

    def get(self, token_hash: str) -> tuple[bool, TokenRecord | None]:
        """(found, record); record None means the hash is known to be unknown."""
        entry = self._entries.get(token_hash)
        if entry is None:
            return False, None
        if entry[0] < time.monotonic():
            del self._entries[token_hash]
            return False, None
        return True, entry[1]

    def put(self, token_hash: str, record: TokenRecord | None) -> None:
        self._entries[token_hash] = (time.monotonic() + self._ttl, record)
        self._entries.move_to_end(token_hash)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def forget(self, token_hash: str) -> None:
        self._entries.pop(token_hash, None)
