"""How `compliance-api serve` runs uvicorn: its options, and an HTTP protocol that does not wait for slow clients.

uvicorn times out idle keep-alive connections only; a client that opens a connection and trickles its headers or
body (slowloris) holds a connection and a request task for as long as it likes. `GuardedHttpToolsProtocol` gives
each request `COMPLIANCE_REQUEST_READ_TIMEOUT_SECONDS` to arrive completely (from the connection, then from the first
byte of each request, to the end of its body; a 408 then closes the connection) and refuses headers that have not
ended within `COMPLIANCE_MAX_HEADER_BYTES` (431).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from compliance_api.config import Settings


@functools.cache
def _limits() -> tuple[float, int]:
    """(read timeout, header bytes) of this worker process, read from the environment once."""
    settings = Settings()
    return settings.request_read_timeout_seconds, settings.max_header_bytes


def _closing_response(status_line: bytes) -> bytes:
    return status_line + b"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


TIMEOUT_RESPONSE = _closing_response(b"HTTP/1.1 408 Request Timeout")
HEADERS_TOO_LARGE_RESPONSE = _closing_response(b"HTTP/1.1 431 Request Header Fields Too Large")


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.read_timeout, self.max_header_bytes = _limits()
        self.read_deadline: asyncio.TimerHandle | None = None
        self.header_bytes: int | None = 0  # bytes received since the request began; None once its headers ended

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.header_bytes is not None:
            self.header_bytes += len(data)
            if self.header_bytes > self.max_header_bytes:
                self._refuse(HEADERS_TOO_LARGE_RESPONSE)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.header_bytes = 0
        self._arm()

    def on_headers_complete(self) -> None:
        self.header_bytes = None
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def _arm(self) -> None:
        self._disarm()
        self.read_deadline = self.loop.call_later(self.read_timeout, self._refuse, TIMEOUT_RESPONSE)

    def _disarm(self) -> None:
        if self.read_deadline is not None:
            self.read_deadline.cancel()
            self.read_deadline = None

    def _refuse(self, response: bytes) -> None:
        """Answer (unless the application already did) and close the connection."""
        self._disarm()
        if self.transport.is_closing():
            return
        if self.cycle is None or not self.cycle.response_started:
            self.transport.write(response)
        self.transport.close()


def uvicorn_options(settings: Settings, *, host: str, port: int, workers: int) -> dict[str, Any]:
    """Everything `serve` passes to `uvicorn.run`."""
    return {
        "factory": True,
        "host": host,
        "port": port,
        "workers": workers,
        "http": GuardedHttpToolsProtocol,
        "timeout_keep_alive": settings.keep_alive_timeout_seconds,
        "proxy_headers": True,
        "forwarded_allow_ips": settings.forwarded_allow_ips,
        "server_header": False,
        "access_log": False,
        "log_level": "warning",
    }
