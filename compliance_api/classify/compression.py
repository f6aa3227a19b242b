"""Stored verdicts, compressed: zstd (the `zstandard` package) with a dictionary trained on verdicts, packaged in
`classify/dictionaries/`.

A verdict is kept 7 years, and its advice, rule reasons and legal bases are a few kilobytes of text that every verdict
of a test and language repeats: with a dictionary holding those texts, a verdict compresses to a few hundred bytes.
The bytes compressed are the answer as first given (`orjson.dumps` of the verdict), so decompressing gives them back
byte for byte, whatever later versions of the rulesets or the verdict's schema say; re-rendering from the inputs
would not.

Each value is one zstd frame whose header names the dictionary it was compressed with (zstd's Dict_ID): every row
records its dictionary's version, and a new dictionary (a new id, `python -m compliance_api.classify.dictionary`)
is added beside the old ones, which stay packaged for as long as rows compressed with them are kept.
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import zstandard
from sqlalchemy import LargeBinary
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from compliance_api.classify.verdict_body import VerdictBody

DICTIONARIES = Path(__file__).resolve().parent / "dictionaries"
CURRENT_DICTIONARY = 3
"""The id of the dictionary new values are compressed with (`verdicts-<id>.zdict`)."""
LEVEL = 3
"""zstd's default: about 20 µs and 290 bytes for a 6 kB verdict with the 96 kB dictionary (level 9 saves a third of
the bytes for six times the time), on the classify endpoint's path."""
DICTIONARY_BYTES = 96 * 1024


class UnknownDictionary(ValueError):
    """A stored value names a dictionary this version does not ship."""


@cache
def _dictionary(dict_id: int) -> zstandard.ZstdCompressionDict:
    path = DICTIONARIES / f"verdicts-{dict_id}.zdict"
    if not path.exists():
        raise UnknownDictionary(f"no verdict dictionary {dict_id} in {DICTIONARIES}")
    dictionary = zstandard.ZstdCompressionDict(path.read_bytes())
    if dictionary.dict_id() != dict_id:
        raise UnknownDictionary(f"{path.name} holds dictionary {dictionary.dict_id()}, not {dict_id}")
    dictionary.precompute_compress(level=LEVEL)  # else every compression rebuilds the dictionary's tables
    return dictionary


class _Codecs(threading.local):
    """zstd contexts are not safe to share between threads: one compressor and decompressors per thread."""

    def __init__(self) -> None:
        self._compressor: zstandard.ZstdCompressor | None = None
        self.decompressors: dict[int, zstandard.ZstdDecompressor] = {}

    def compressor(self) -> zstandard.ZstdCompressor:
        if self._compressor is None:
            self._compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=_dictionary(CURRENT_DICTIONARY))
        return self._compressor

    def decompressor(self, dict_id: int) -> zstandard.ZstdDecompressor:
        found = self.decompressors.get(dict_id)
        if found is None:
            dictionary = _dictionary(dict_id) if dict_id else None
            found = self.decompressors[dict_id] = zstandard.ZstdDecompressor(dict_data=dictionary)
        return found


_CODECS = _Codecs()


def compress(raw: bytes) -> bytes:
    """One zstd frame of `raw`, compressed with the current dictionary (whose id the frame header carries)."""
    return _CODECS.compressor().compress(raw)


def decompress(stored: bytes) -> bytes:
    """The bytes `compress` was given, with whichever packaged dictionary the frame names."""
    dict_id = zstandard.get_frame_parameters(stored).dict_id
    return _CODECS.decompressor(dict_id).decompress(stored)


def dictionary_of(stored: bytes) -> int:
    """The id of the dictionary a stored value was compressed with (0: none)."""
    return int(zstandard.get_frame_parameters(stored).dict_id)


class CompressedJSON(TypeDecorator[dict[str, Any]]):
    """A JSON object stored as `compress(orjson.dumps(value))` in a binary column (JSON data, or a verdict's
    dataclass, which orjson writes as the answer's bytes); read back as JSON data."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: dict[str, Any] | VerdictBody | None, dialect: Dialect) -> bytes | None:
        return None if value is None else compress(orjson.dumps(value))

    def process_result_value(self, value: bytes | None, dialect: Dialect) -> dict[str, Any] | None:
        if value is None:
            return None
        loaded: dict[str, Any] = orjson.loads(decompress(value))
        return loaded
