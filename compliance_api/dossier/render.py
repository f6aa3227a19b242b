"""The dossier as a PDF: the Typst template `templates/dossier.typ`, compiled with the dossier as JSON data.

Python writes every text of the page (in the dossier's language, answers and amounts as that language writes them)
into one JSON document; the template places each as text, never as markup, and attaches the JWS as `dossier.jws`.
So nothing a client sent (reference, metadata, answers) can do more than appear as written. The template reads no
file but itself and no package. Typst compiles it (`typeset.py`); the compiled PDF is then signed as a whole
(`pdf_signature.py`): the signature binds the pages to the attached JWS.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import structlog

from compliance_api.classify.language import CODES, Language, day, decimal, money
from compliance_api.classify.verdict import Verdict, word
from compliance_api.dossier.schemas import Dossier, DossierChange, DossierQuestion, DossierRescore, DossierThreshold
from compliance_api.dossier.texts import dossier_texts
from compliance_api.dossier.typeset import Typeset, Typesetter, typesetter
from compliance_api.passport.certificates import PdfSigningKey

# What XML 1.0 cannot carry (its `Char` production): the PDF's metadata is an XMP (XML) packet, and pyHanko refuses
# to sign a PDF whose XMP holds one. A client's reference keeps every character on the page and in the JWS; only
# the document title, which is metadata, leaves these out. No library in use exposes the `Char` class, hence the
# pattern.
NOT_XML_CHARACTER = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
VERDICT_COLOURS = {Verdict.safe: "#0a6a2a", Verdict.risky: "#8a5a00", Verdict.unsafe: "#a00000"}

log = structlog.get_logger(__name__)


def verify_command(jwks: str) -> str:
    """One line of Python that checks a dossier PDF's attached JWS against the published keys and prints it."""
    return (
        'python3 -c \'import sys,jwt,pypdf; t=pypdf.PdfReader(sys.argv[1]).attachments["dossier.jws"][0].decode(); '
        'k=jwt.PyJWKClient(sys.argv[2]).get_signing_key_from_jwt(t); print(jwt.decode(t,k,algorithms=["EdDSA"]))\' '
        f"dossier.pdf {jwks}"
    )


def typeset(dossier: Dossier, jws: str, setter: Typesetter | None = None) -> Typeset:
    """The dossier's PDF as Typst writes it (unsigned), the JWS attached, dated when the dossier was issued."""
    return (setter or typesetter()).typeset(page_data(dossier, jws), dossier.issued_at)


def log_warnings(dossier: Dossier, done: Typeset) -> None:
    """What Typst warned about (nothing, for a sound template)."""
    for warning in done.warnings:
        log.warning("dossier_typst_warning", warning=warning, classification_id=str(dossier.classification_id))


def signature_reason(dossier: Dossier) -> str:
    """What a PDF reader shows as the reason of the dossier's signature."""
    return f"Classification dossier {dossier.classification_id}"


def dossier_pdf(dossier: Dossier, jws: str, key: PdfSigningKey) -> bytes:
    """The dossier as a PDF, the JWS attached as `dossier.jws`, signed as a whole with `key` (PAdES)."""
    # pyHanko takes a third of a second to import: a process loads it with its first PDF, not at start-up (every
    # API process and command imports this module).
    from compliance_api.dossier.pdf_signature import sign_pdf

    done = typeset(dossier, jws)
    log_warnings(dossier, done)
    return sign_pdf(done.pdf, key, signature_reason(dossier))


def metadata_text(text: str) -> str:
    """`text` as the PDF's XMP metadata can carry it: without the characters XML 1.0 does not allow."""
    return NOT_XML_CHARACTER.sub("", text)


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


def _as_asked(question: DossierQuestion) -> object:
    """The answer to the question as it is asked: a yes/no question asked inverted shows the opposite of the value."""
    if isinstance(question.answer, bool) and question.true_when == "no":
        return not question.answer
    return question.answer


def _change(value: object, texts: dict[str, str], language: Language) -> str:
    return value if isinstance(value, str) else _answer(value, texts, language)


def _amount(value: float, language: Language) -> str:
    return decimal(Decimal(str(value)), language)


def _moment(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _verdict(value: Verdict, language: Language) -> dict[str, str]:
    """A verdict as the page shows it: its word in the dossier's language (the API's and the dashboard's word)."""
    return {"label": word(value, language), "colour": VERDICT_COLOURS[value]}


def _threshold(threshold: DossierThreshold | None, texts: dict[str, str], language: Language) -> dict[str, Any] | None:
    if threshold is None:
        return None
    amount = money(Decimal(str(threshold.amount_eur)), language)
    since = f"{texts['valid_from']} {day(threshold.valid_from, language)}"
    if threshold.name == "tariefgrens":
        head = f"{texts['tariefgrens']}: {amount}, {since}"
    else:
        multiplier = decimal(Decimal(str(threshold.multiplier or 0)), language).rstrip("0").rstrip(",.")
        wage = f"{texts['times_min_wage']} {money(Decimal(str(threshold.min_wage_hourly or 0)), language)}"
        head = f"{texts['rate_benchmark']}: {amount} ({multiplier} {wage}), {since}"
    return {"head": head, "basis": threshold.basis, "url": threshold.source_url}


def _changed(
    change: DossierChange, labels: dict[str, str], texts: dict[str, str], language: Language
) -> dict[str, Any]:
    """One change of a re-score as a reader reads it: what changed, named by its text (a criterion by its question or
    description, a threshold by its name), and its values before and after (a threshold as an amount)."""
    values = (change.previous, change.new)
    if change.what == "threshold":
        shown = [_change(v, texts, language) if v is None else money(Decimal(str(v)), language) for v in values]
    else:
        shown = [_change(v, texts, language) for v in values]
    name = labels.get(change.name, change.name)
    return {"what": texts[f"change_{change.what}"], "name": name, "before": shown[0], "after": shown[1]}


def _rescore(
    rescore: DossierRescore, labels: dict[str, str], texts: dict[str, str], language: Language
) -> dict[str, Any]:
    return {
        "at": _moment(rescore.created_at),
        "before": _verdict(rescore.previous_verdict, language),
        "after": _verdict(rescore.verdict, language),
        "as_of": str(rescore.as_of),
        "ruleset_id": rescore.ruleset.id,
        "ruleset_version": str(rescore.ruleset.version),
        "changes": [_changed(change, labels, texts, language) for change in rescore.changes],
    }


def _asked(dossier: Dossier, texts: dict[str, str]) -> dict[str, Any]:
    asked = dossier.asked
    if asked.channel == "api":
        token = asked.token
        channel, who = texts["channel_api"], (token.name if token and token.name else texts["deleted_token"])
        last4 = token.last4 if token else None
    else:
        user = asked.dashboard_user
        channel, who = texts["channel_dashboard"], (user.email if user and user.email else texts["deleted_user"])
        last4 = None
    return {
        "at": _moment(asked.asked_at),
        "account": asked.account.email or texts["deleted_user"],
        "channel": channel,
        "who": who,
        "last4": last4,
        "request_id": asked.request_id,
    }


def _labels(dossier: Dossier, texts: dict[str, str]) -> dict[str, str]:
    """What a re-score's changes are named by: each criterion's text by its id, and the threshold by its name."""
    labels = {c.name: c.label for c in dossier.criteria if c.label}
    labels["tariefgrens"] = texts["tariefgrens" if dossier.test.kind.value == "zelfstandigenwet" else "rate_benchmark"]
    return labels


def page_data(dossier: Dossier, jws: str) -> dict[str, Any]:
    """Every text the template shows, in the dossier's language: the `data` it is compiled with (the typesetter adds
    the font it has)."""
    language = CODES[dossier.language]
    texts = dossier_texts().of(language)
    kind = dossier.test.kind.value
    return {
        "t": texts,
        "lang": dossier.language,
        "document_title": metadata_text(f"{texts['title']} {dossier.reference or dossier.classification_id}"),
        "document_description": f"{dossier.test.name}: {word(dossier.verdict.current, language)}",
        "footer": f"{texts['title']} {dossier.classification_id}",
        "jws": jws,
        "jws_description": texts["jws_description"],
        "subtitle": dossier.test.name + (f": {dossier.reference}" if dossier.reference else ""),
        "sandbox": not dossier.livemode,
        "reference": dossier.reference or texts["none"],
        "metadata": list(dossier.metadata.items()),
        "test": dossier.test.name,
        "classification_id": str(dossier.classification_id),
        "environment": texts[f"environment_{dossier.environment}"],
        "environment_code": dossier.environment,
        "language": dossier.language,
        "monitored": texts["yes"] if dossier.monitor else texts["no"],
        "asked": _asked(dossier, texts),
        "verdict": {
            "current": _verdict(dossier.verdict.current, language),
            "original": _verdict(dossier.verdict.original, language),
            "score": str(dossier.verdict.score),
            "as_of": str(dossier.verdict.as_of),
            "advice": dossier.verdict.advice,
            "presumption": bool(dossier.verdict.presumption_of_employment),
        },
        "questions": [
            {
                "question": q.question,
                "name": q.name,
                "answered": q.answered,
                "answer": _answer(_as_asked(q), texts, language),
            }
            for q in dossier.questions
        ],
        "unanswered_note": bool(dossier.verdict.unanswered),
        "criteria": [
            {
                "name": c.label or c.name,
                "finding": texts[f"finding_{kind}_{str(c.finding).lower()}"] if c.answered else None,
                "weight": str(c.weight),
                "source": c.legal_basis.text,
                "url": c.legal_basis.source_url,
            }
            for c in dossier.criteria
        ],
        "rules_applied": [
            {"verdict": _verdict(rule.verdict, language), "reason": rule.reason}
            for rule in dossier.verdict.rules_applied
        ],
        "ruleset": {
            "id": dossier.ruleset.id,
            "version": str(dossier.ruleset.version),
            "valid_from": str(dossier.ruleset.valid_from),
            "law": dossier.ruleset.law,
            "source_note": dossier.ruleset.source_note,
        },
        "threshold": _threshold(dossier.threshold, texts, language),
        "history": [_rescore(rescore, _labels(dossier, texts), texts, language) for rescore in dossier.history],
        "verification": {
            "jwks_url": dossier.verification.jwks_url,
            "kid": dossier.verification.kid,
            "signature": jws.rsplit(".", 1)[-1],
            "issued_at": _moment(dossier.issued_at),
            "command": verify_command(dossier.verification.jwks_url),
        },
    }
