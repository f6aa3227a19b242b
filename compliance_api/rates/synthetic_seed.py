"""The synthetic generator's default seed, apart so that `rates generate --help` shows it without loading the database
layer (as `dac7/nexus.py` does for the operator's nexus)."""

from __future__ import annotations

DEFAULT_SEED = 20260709
