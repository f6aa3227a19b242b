"""The most requests a batch holds, apart so that `classify bulk --help` shows it without loading the schemas (and
with them the web framework)."""

from __future__ import annotations

MAX_BATCH_ITEMS = 1000
