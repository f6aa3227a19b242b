"""How `compliance-api serve` runs uvicorn: its options, and an HTTP protocol that does not wait for slow clients.

uvicorn times out idle keep-alive connections only; a client that opens a connection and trickles its headers or
body (slowloris) holds a connection and a request task for as long as it likes. `GuardedHttpToolsProtocol` gives
each request `COMPLIANCE_REQUEST_READ_TIMEOUT_SECONDS` to arrive completely (from the connection, then from the first
byte of each request, to the end of its body; a 408 then closes the connection) and refuses a request line and
headers longer than `COMPLIANCE_MAX_HEADER_BYTES` (431), however they are split into writes: bytes of headers that have
not ended are counted as they arrive, and the parser's callbacks count the ones it parsed in the same write.
httptools itself has no limit. These answers, and the 400 for a request the parser rejects, are problem+json with
the security headers, like the application's.

Closing a socket whose received bytes are still unread makes the kernel reset the connection, and a reset can
discard the answer before the client reads it (a 100 kB header sent in one write often did). So a refusal closes as
nginx's lingering close does: the answer, then end of writing, then what else the client sends is read and dropped
until it closes or `COMPLIANCE_REFUSAL_LINGER_SECONDS` pass.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from compliance_api.config import Settings
from compliance_api.errors import PROBLEM_JSON, ErrorCode, problem_body
from compliance_api.kit.addresses import request_base_url
from compliance_api.middleware import SECURITY_HEADERS


@functools.cache
def _limits() -> tuple[float, int, str, float]:
    """(read timeout, header bytes, COMPLIANCE_PUBLIC_BASE_URL, refusal linger) of this worker process, read from the
    environment once."""
    settings = Settings()
    return (
        settings.request_read_timeout_seconds,
        settings.max_header_bytes,
        settings.public_base_url,
        settings.refusal_linger_seconds,
    )


STATUS_LINES: dict[ErrorCode, bytes] = {
    "malformed_request": b"HTTP/1.1 400 Bad Request",
    "request_timeout": b"HTTP/1.1 408 Request Timeout",
    "headers_too_large": b"HTTP/1.1 431 Request Header Fields Too Large",
}


def closing_problem(code: ErrorCode, base_url: str) -> bytes:
    """A whole problem+json response, with the security headers, that ends the connection (no request reached the
    application, so no request id was offered: a fresh one names this answer)."""
    request_id = "req_" + secrets.token_hex(12)
    body = problem_body(code, request_id=request_id, base_url=base_url)
    headers = [
        (b"content-type", PROBLEM_JSON.encode()),
        (b"content-length", b"%d" % len(body)),
        (b"connection", b"close"),
        *SECURITY_HEADERS,
        (b"x-request-id", request_id.encode()),
    ]
    return STATUS_LINES[code] + b"\r\n" + b"".join(b"%s: %s\r\n" % header for header in headers) + b"\r\n" + body


class HeadersTooLarge(Exception):
    """Raised in a parser callback to stop httptools mid-request; uvicorn then calls `send_400_response`."""


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.read_timeout, self.max_header_bytes, self.public_base_url, self.linger_seconds = _limits()
        self.read_deadline: asyncio.TimerHandle | None = None
        self.header_bytes: int | None = 0  # bytes received since the request began; None once its headers ended
        self.parsed_header_bytes = 0  # request line and headers the parser has handed over for this request
        self.lingering: asyncio.TimerHandle | None = None  # set once refused: the connection's last moments

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self.lingering is not None:
            self.lingering.cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.lingering is not None:
            return  # refused: the rest is dropped unread
        super().data_received(data)
        if self.header_bytes is not None:
            self.header_bytes += len(data)
            if self.header_bytes > self.max_header_bytes:
                self._refuse("headers_too_large")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.header_bytes = 0
        self.parsed_header_bytes = 0
        self._arm()

    def on_url(self, url: bytes) -> None:
        self._count_parsed(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count_parsed(len(name) + len(value) + 4)  # ": " and CRLF
        super().on_header(name, value)

    def _count_parsed(self, size: int) -> None:
        self.parsed_header_bytes += size
        if self.parsed_header_bytes > self.max_header_bytes:
            raise HeadersTooLarge

    def send_400_response(self, msg: str) -> None:
        """The parser refused the request (or a callback stopped it because the headers are too large)."""
        self._refuse("headers_too_large" if self.parsed_header_bytes > self.max_header_bytes else "malformed_request")

    def on_headers_complete(self) -> None:
        self.header_bytes = None
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def _arm(self) -> None:
        self._disarm()
        self.read_deadline = self.loop.call_later(self.read_timeout, self._refuse, "request_timeout")

    def _disarm(self) -> None:
        if self.read_deadline is not None:
            self.read_deadline.cancel()
            self.read_deadline = None

    def _refuse(self, code: ErrorCode) -> None:
        """Answer with the problem `code` (unless the application already answered) and close the connection."""
        self._disarm()
        if self.transport.is_closing() or self.lingering is not None:
            return
        if self.cycle is None or not self.cycle.response_started:
            scope = {"server": self.server, "scheme": self.scheme}  # the connection's end, as a request's scope has it
            self.transport.write(closing_problem(code, request_base_url(scope, self.public_base_url)))
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the application's request ends here, as if the client had gone
            self.cycle.message_event.set()
        self._linger()

    def _linger(self) -> None:
        """Stop writing, read and drop what the client still sends, and close when it does or after
        `linger_seconds` (see the module's docstring)."""
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self.transport.resume_reading()
        self.lingering = self.loop.call_later(self.linger_seconds, self.transport.close)


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
