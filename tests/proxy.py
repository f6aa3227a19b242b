"""A TCP proxy that a test starts and controls, to take PostgreSQL or Redis out of reach without touching the shared
servers: `pause()` holds every byte in both directions (the peer hangs), `close()` drops every connection and refuses
new ones, `resume()` and `reopen()` undo them. It runs in a thread of its own, so it serves whichever event loop (or
thread) the code under test uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0  # chosen by the system on start, kept on reopen
        self.connections = 0  # client connections accepted so far
        self.bytes_from_clients = 0  # what clients sent, forwarded or held
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"proxy:{target_port}", daemon=True)
        self._server: asyncio.Server | None = None
        self._flowing = asyncio.Event()
        self._writers: set[asyncio.StreamWriter] = set()

    def start(self) -> None:
        self._thread.start()
        self._run(self._listen())

    def pause(self) -> None:
        """Keep accepting connections, forward nothing: the client's reads wait (its timeouts fire)."""
        self._loop.call_soon_threadsafe(self._flowing.clear)

    def resume(self) -> None:
        self._loop.call_soon_threadsafe(self._flowing.set)

    def close(self) -> None:
        """Stop listening (connections are refused) and cut every open connection."""
        self._run(self._close())

    def reopen(self) -> None:
        self._run(self._listen())

    def stop(self) -> None:
        self.close()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def _run(self, work: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(work, self._loop).result(timeout=10)

    async def _listen(self) -> None:
        self._flowing.set()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.transport.abort()
            return
        self._writers |= {client_writer, server_writer}
        await asyncio.gather(
            self._pump(client_reader, server_writer, count=True),
            self._pump(server_reader, client_writer, count=False),
            return_exceptions=True,
        )
        for writer in (client_writer, server_writer):
            self._writers.discard(writer)
            writer.transport.abort()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, count: bool) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                if count:
                    self.bytes_from_clients += len(data)
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
        writer.transport.abort()


@contextmanager
def proxy_to(host: str, port: int) -> Iterator[TcpProxy]:
    proxy = TcpProxy(host, port)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
