"""The dossier as a PDF: a Jinja2 template rendered by WeasyPrint, with the JWS attached as `dossier.jws`.

The stylesheet and the font configuration are built once per process; the template loads nothing from outside
(a URL fetcher that refuses every fetch), so a dossier's text can never make the renderer reach the network.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from functools import cache
from typing import Any, NoReturn

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from weasyprint import CSS, HTML, Attachment
from weasyprint.text.fonts import FontConfiguration

from compliance_api.classify.language import CODES, Language, decimal
from compliance_api.dossier.schemas import Dossier
from compliance_api.dossier.texts import dossier_texts

JWS_ATTACHMENT = "dossier.jws"


def verify_command(jwks: str) -> str:
    """One line of Python that checks a dossier PDF's attached JWS against the published keys and prints it."""
    return (
        'python3 -c \'import sys,jwt,pypdf; t=pypdf.PdfReader(sys.argv[1]).attachments["dossier.jws"][0].decode(); '
        'k=jwt.PyJWKClient(sys.argv[2]).get_signing_key_from_jwt(t); print(jwt.decode(t,k,algorithms=["EdDSA"]))\' '
        f"dossier.pdf {jwks}"
    )


def _refuse(url: str, *args: Any, **kwargs: Any) -> NoReturn:
    raise ValueError(f"the dossier template loads nothing from outside ({url})")


@cache
def _templates() -> Environment:
    environment = Environment(
        loader=PackageLoader("compliance_api.dossier", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return environment


def _stylesheet(name: str, fonts: FontConfiguration) -> CSS:
    source = _templates().loader.get_source(_templates(), name)[0]  # type: ignore[union-attr]
    return CSS(string=source, font_config=fonts, url_fetcher=_refuse)


@cache
def _style() -> tuple[CSS, CSS, FontConfiguration]:
    """The dossier's own user-agent stylesheet, its stylesheet and the font configuration, built once."""
    fonts = FontConfiguration()
    return _stylesheet("dossier-ua.css", fonts), _stylesheet("dossier.css", fonts), fonts


class _DossierHTML(HTML):  # type: ignore[misc]  # WeasyPrint has no type hints
    """A document with the dossier's user-agent stylesheet instead of WeasyPrint's HTML5 one (see dossier-ua.css).

    WeasyPrint offers no option for this; `_ua_stylesheets` is the method its own `HTML` reads them from, and the
    version is pinned (`weasyprint>=70,<71`): every test that renders a PDF would show a change of that method."""

    def _ua_stylesheets(self, forms: bool = False) -> list[CSS]:
        return [_style()[0]]


def _answer(value: object, texts: dict[str, str], language: Language) -> str:
    if value is None:
        return texts["not_answered"]
    if value is True:
        return texts["yes"]
    if value is False:
        return texts["no"]
    if isinstance(value, float) and not value.is_integer():
        return decimal(Decimal(str(value)), language)
    return str(int(value)) if isinstance(value, float) else str(value)


def _amount(value: float, language: Language) -> str:
    return decimal(Decimal(str(value)), language)


def _moment(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def dossier_html(dossier: Dossier, jws: str) -> str:
    """The dossier as the HTML the PDF is made from (in the dossier's language)."""
    language = CODES[dossier.language]
    texts = dossier_texts().of(language)
    return (
        _templates()
        .get_template("dossier.html")
        .render(
            d=dossier,
            t=texts,
            signature=jws.rsplit(".", 1)[-1],
            verify=verify_command(dossier.verification.jwks_url),
            answer=lambda value: _answer(value, texts, language),
            amount=lambda value: _amount(value, language),
            moment=_moment,
        )
    )


def dossier_pdf(dossier: Dossier, jws: str) -> bytes:
    """The dossier as a PDF, the JWS attached as `dossier.jws`."""
    _, style, fonts = _style()
    document = _DossierHTML(string=dossier_html(dossier, jws), url_fetcher=_refuse)
    attachment = Attachment(
        string=jws, name=JWS_ATTACHMENT, description="Compact JWS of this dossier", url_fetcher=_refuse
    )
    pdf: bytes = document.write_pdf(
        stylesheets=[style],
        font_config=fonts,
        attachments=[attachment],
        pdf_identifier=dossier.classification_id.bytes,
        custom_metadata=True,
    )
    return pdf
