"""Typst, compiling the dossier template with the page's data: all a process that renders PDFs needs to import.

An export's PDF workers run only this (`typeset_page`); the parent process reads the records, writes every text of
the page (`render.page_data`), signs and zips. So a worker imports Typst and little else: the service's models,
SQLAlchemy and pyHanko stay in the parent, and a worker's memory is its fonts, its compiler and Typst's memo.

Fonts are found once per process: DejaVu Sans where the system has it (Debian's `fonts-dejavu-core`), else the fonts
Typst carries inside the package (Libertinus Serif, and DejaVu Sans Mono for code in either case). A Typst compiler
takes itself for the length of a compilation and cannot be shared by threads compiling at once ("Already borrowed"),
so each thread makes its own, over the fonts scanned once.

The PDF is PDF/A-3u (archival; PDF/A-3 allows the attached JWS). PDF/A forbids showing a character no font has, so a
dossier whose client text holds one (an emoji, Chinese, a control character) is written as a plain PDF 1.7 instead,
its text still extractable as sent.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import typst

TEMPLATE = Path(__file__).parent / "templates" / "dossier.typ"
FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/dejavu"))  # Debian; Fedora, Alpine
SYSTEM_FAMILY = "DejaVu Sans"
BUNDLED_FAMILY = "Libertinus Serif"
ARCHIVAL: typst.PDFStandard = "a-3u"


@dataclass(frozen=True, slots=True)
class Typeset:
    """A compiled dossier, the PDF standard it meets (None: plain PDF), and what Typst warned about (nothing, for a
    sound template)."""

    pdf: bytes
    standard: typst.PDFStandard | None
    warnings: list[str]


class Typesetter:
    """Compiles the dossier template with the fonts found in `font_dirs` (and those Typst bundles); one compiler
    per thread that uses it."""

    def __init__(self, font_dirs: Sequence[Path] = FONT_DIRS) -> None:
        found = [str(folder) for folder in font_dirs if folder.is_dir()]
        self.fonts = typst.Fonts(include_system_fonts=False, include_embedded_fonts=True, font_paths=found)
        self.family = SYSTEM_FAMILY if SYSTEM_FAMILY in self.fonts.families() else BUNDLED_FAMILY
        self._local = threading.local()

    def _compiler(self) -> typst.Compiler:
        compiler: typst.Compiler | None = getattr(self._local, "compiler", None)
        if compiler is None:
            compiler = typst.Compiler(str(TEMPLATE), font_paths=self.fonts, ignore_system_fonts=True)
            self._local.compiler = compiler
        return compiler

    def typeset(self, page: dict[str, Any], issued_at: dt.datetime) -> Typeset:
        """The PDF of a page's data (`render.page_data`), in this typesetter's font, dated `issued_at` (the same
        data gives the same bytes)."""
        data = orjson.dumps({**page, "font": self.family}).decode()
        issued_at = issued_at.astimezone(dt.UTC).replace(microsecond=0)
        try:
            return self._compile(data, issued_at, ARCHIVAL)
        except typst.TypstError as error:
            if not error.message.startswith("PDF/A"):  # only a character PDF/A cannot show makes it a plain PDF
                raise
            return self._compile(data, issued_at, None)

    def _compile(self, data: str, issued_at: dt.datetime, standard: typst.PDFStandard | None) -> Typeset:
        pdf, warnings = self._compiler().compile_with_warnings(
            sys_inputs={"data": data},
            pdf_standards=standard,
            pdf_tags=False,  # tags would add half again to every PDF (bench/RESULTS.md)
            timestamp=issued_at,
        )
        assert isinstance(pdf, bytes)
        return Typeset(pdf, standard, [warning.message for warning in warnings])


@cache
def typesetter() -> Typesetter:
    return Typesetter()


def typeset_page(page_json: bytes, issued_at: dt.datetime) -> Typeset:
    """What an export's worker runs: the PDF of a page's data given as JSON (it crosses the process boundary)."""
    return typesetter().typeset(orjson.loads(page_json), issued_at)
