"""Fetching a register from a URL: streamed to a temporary file, conditional on the previous download's validators."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

CHUNK_BYTES = 1 << 16


class DownloadError(ValueError):
    """The register could not be fetched completely; nothing was imported."""


@dataclass(frozen=True, slots=True)
class Fetched:
    """`path` and `sha256` (of its bytes, hex) are None when the server answered 304 Not Modified."""

    path: Path | None
    etag: str | None
    last_modified: str | None
    sha256: str | None = None


def conditional_headers(etag: str | None, last_modified: str | None) -> dict[str, str]:
    headers = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers


@contextmanager
def fetch(
    url: str,
    *,
    etag: str | None = None,
    last_modified: str | None = None,
    on_total: Callable[[int | None], None] = lambda _: None,
    on_bytes: Callable[[int], None] = lambda _: None,
    timeout: float = 60.0,
) -> Iterator[Fetched]:
    """Download `url` into a temporary file (removed afterwards); a cut-off or failed transfer raises DownloadError."""
    with tempfile.TemporaryDirectory(prefix="wtta-") as folder:
        target = Path(folder) / "register"
        try:
            with httpx.stream(
                "GET", url, headers=conditional_headers(etag, last_modified), timeout=timeout, follow_redirects=True
            ) as response:
                if response.status_code == httpx.codes.NOT_MODIFIED:
                    fetched = Fetched(None, etag, last_modified)
                elif response.status_code != httpx.codes.OK:
                    raise DownloadError(f"{url} answered {response.status_code} {response.reason_phrase}")
                else:
                    length = response.headers.get("Content-Length")
                    on_total(int(length) if length and length.isascii() and length.isdigit() else None)
                    digest = hashlib.sha256()
                    with target.open("wb") as file:
                        for chunk in response.iter_bytes(CHUNK_BYTES):
                            file.write(chunk)
                            digest.update(chunk)
                            on_bytes(len(chunk))
                    fetched = Fetched(
                        target, response.headers.get("ETag"), response.headers.get("Last-Modified"), digest.hexdigest()
                    )
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise DownloadError(f"downloading {url} failed: {exc}") from None
        yield fetched
