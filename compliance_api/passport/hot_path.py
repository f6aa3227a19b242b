"""The per-application collaborator of the two hot passport routes: a direct reader and the bodies built last."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from compliance_api.passport.cache import LatestCache
from compliance_api.passport.mirror import CountedReader, MirroredReader
from compliance_api.passport.reader import PassportReader, SqliteReader, postgres_dsn, reader_for


@dataclass(frozen=True, slots=True)
class HotPath:
    """Per application: the direct reader of the two hot routes and the bodies they built last."""

    reader: PassportReader
    own: LatestCache[bytes]
    summaries: LatestCache[bytes]

    async def close(self) -> None:
        if isinstance(self.reader, MirroredReader):
            await self.reader.close()


def new_hot_path(engine: AsyncEngine, *, mirror: bool = True) -> HotPath:
    """The hot routes' reader (its connections are made on first use; through an in-memory copy of the rows unless
    `mirror` is off) and empty body caches."""
    reader = reader_for(engine)
    if mirror and isinstance(reader, SqliteReader):
        reader = CountedReader(reader)
    elif mirror and (dsn := postgres_dsn(engine)) is not None:
        reader = MirroredReader(reader, dsn)
    return HotPath(reader, LatestCache(), LatestCache())
