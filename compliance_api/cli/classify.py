"""`compliance-api classify bulk FILE.csv --out RESULT.csv`: the Dutch test for every row of a CSV, kept in the audit
trail like API calls, in batches of 1000 (the batch endpoint's code path)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import User
from compliance_api.auth.caller import Caller
from compliance_api.classify import batch
from compliance_api.classify.language import DEFAULT_LANGUAGE
from compliance_api.classify.ruleset import ENGAGEMENT_FIELDS, packaged_rulesets
from compliance_api.classify.schemas import MAX_BATCH_ITEMS, ZelfstandigenwetRequest
from compliance_api.classify.service import score_engagement
from compliance_api.cli.common import EnvOption, progress, read_input, refuse_unsafe, run
from compliance_api.config import Settings
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.kit.batch_writer import batch_writer_for
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.ratelimit.tiers import tier_for

app = typer.Typer(no_args_is_help=True, help="Classify engagements in bulk.")

NUMBERS = {"hourly_rate_eur": float, "months_duration": int, "days_per_week": int, "other_clients_count": int}
FLAGS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
COLUMNS = (*ENGAGEMENT_FIELDS, "reference")
RESULT_COLUMNS = ("id", "verdict", "score", "error")
CLI_TOKEN_ID = uuid.UUID(int=0)
"""The `token_id` of verdicts made by this command: no API token asked for them."""


def _value(field: str, text: str) -> Any:
    """A cell as the request field wants it; an empty cell leaves the field unanswered."""
    if field in NUMBERS:
        try:
            return NUMBERS[field](text)
        except ValueError:
            return text  # refused by validation, naming the field
    return FLAGS.get(text.lower(), text)


def request_of(row: dict[str, str], as_of: dt.date | None) -> dict[str, Any]:
    """The `POST /v1/classify/zelfstandigenwet` body of one CSV row."""
    engagement = {f: _value(f, row[f].strip()) for f in ENGAGEMENT_FIELDS if (row.get(f) or "").strip()}
    body: dict[str, Any] = {"engagement": engagement}
    if (row.get("reference") or "").strip():
        body["reference"] = row["reference"].strip()
    if as_of is not None:
        body["as_of"] = as_of.isoformat()
    return body


def read_rows(raw: bytes) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of a UTF-8 CSV whose columns are the engagement's fields and `reference`."""
    try:
        reader = csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline=""))
        rows = list(reader)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"not a UTF-8 CSV file: {exc}") from None
    header = list(reader.fieldnames or [])
    unknown = [name for name in header if name not in COLUMNS]
    if not header or unknown:
        raise ValueError(f"unknown columns {unknown or '(none found)'}; the columns are {', '.join(COLUMNS)}")
    return header, rows


def _result(entry: dict[str, Any]) -> dict[str, str]:
    if "index" in entry:
        return {"id": "", "verdict": "", "score": "", "error": entry["detail"]}
    return {"id": entry["id"], "verdict": entry["verdict"], "score": str(entry["score"]), "error": ""}


def _chunks(rows: Sequence[dict[str, str]]) -> Iterator[Sequence[dict[str, str]]]:
    for start in range(0, len(rows), MAX_BATCH_ITEMS):
        yield rows[start : start + MAX_BATCH_ITEMS]


async def _classify_file(
    settings: Settings, email: str, env: Environment, rows: list[dict[str, str]], as_of: dt.date | None
) -> list[dict[str, str]]:
    engine = create_engine(settings.resolved_database_url)
    audit = GroupCommit(batch_writer_for(engine))
    try:
        async with create_sessionmaker(engine)() as session:
            user: User = await accounts_service.get_by_email_or_raise(session, email=email)
        caller = Caller(user.id, CLI_TOKEN_ID, env, user.plan, user.kind, tier_for(user.plan, env), "cli")
        base_url = str(settings.public_base_url).rstrip("/")
        results: list[dict[str, str]] = []
        with progress(len(rows), "classifying") as advance:
            for chunk in _chunks(rows):
                answer = await batch.classify_batch(
                    audit,
                    caller,
                    [request_of(row, as_of) for row in chunk],
                    ZelfstandigenwetRequest,
                    score_engagement,
                    packaged_rulesets(),
                    utcnow(),
                    DEFAULT_LANGUAGE,
                    base_url,
                )
                results += [_result(entry) for entry in answer["data"]]
                if advance is not None:
                    advance(len(chunk))
        return results
    finally:
        await audit.close()
        await engine.dispose()


def _write(out: Path, header: list[str], rows: list[dict[str, str]], results: list[dict[str, str]]) -> None:
    """The input columns and the results, written whole or not at all (through a temporary file)."""
    partial = out.with_name(out.name + ".partial")
    with partial.open("w", encoding="utf-8", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=[*header, *RESULT_COLUMNS])
        writer.writeheader()
        writer.writerows({**row, **result} for row, result in zip(rows, results, strict=True))
    partial.replace(out)


@app.command("bulk")
def bulk(
    path: Annotated[Path, typer.Argument(help="A UTF-8 CSV: one column per engagement field, and `reference`.")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the input with id, verdict, score, error.")],
    email: Annotated[str, typer.Option("--email", help="The account the verdicts belong to (its audit trail).")],
    env: EnvOption = Environment.live,
    as_of: Annotated[
        dt.datetime | None,
        typer.Option("--as-of", formats=["%Y-%m-%d"], help="Judge under the law in force on this date."),
    ] = None,
) -> None:
    """Classify every row under the Dutch test; each verdict is kept as an audit record of the account, as if the
    API had been called. A row that is not a valid engagement gets its error in the `error` column."""
    settings = Settings()
    refuse_unsafe(settings)
    day = as_of.date() if as_of is not None else None

    async def work() -> tuple[list[str], list[dict[str, str]], list[dict[str, str]]]:
        header, rows = read_rows(read_input(path))
        return header, rows, await _classify_file(settings, email, env, rows, day)

    header, rows, results = run(work)
    _write(out, header, rows, results)
    verdicts = [r["verdict"] for r in results if r["verdict"]]
    counts = ", ".join(f"{v}: {verdicts.count(v)}" for v in ("safe", "risky", "unsafe"))
    typer.echo(f"{len(rows)} rows, {len(verdicts)} classified ({counts}), {len(rows) - len(verdicts)} refused; {out}")
