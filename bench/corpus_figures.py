"""The decided cases' figures for the rulesets in this checkout: the open part case by case, the sealed part by totals.

The corpus is `tests/classify/cases/` and its two parts are `tests/classify/test_cases.py`'s (`OPEN`, `SEALED`, chosen
by a hash of each case id). Each case's request is scored as the endpoint scores it (`score_engagement`,
`score_cross_border`), in process. For the open part every case is printed: its country, how many inputs it fills,
the court's outcome, the verdict, and whether that is the court's answer or a contradiction. For the sealed part only
the totals are computed and printed (cases, contradictions, cases filling four inputs and how many of them get the
court's answer): never which sealed case got which verdict, so that no rule is fitted to one.

`--record` writes the totals of both parts into the history table of `bench/RESULTS.md` (section "Decided cases"),
one row per ruleset version: recording the same version again replaces its row. Run it once per ruleset version.

    .venv/bin/python bench/corpus_figures.py             # the open part only
    .venv/bin/python bench/corpus_figures.py --sealed    # and the sealed totals
    .venv/bin/python bench/corpus_figures.py --record [--label TEXT]
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compliance_api.classify.language import DEFAULT_LANGUAGE
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.classify.service import score_cross_border, score_engagement
from compliance_api.kit.environment import Environment
from tests.classify.test_cases import CONTRADICTION, COURTS_ANSWER, MIN_INPUTS, OPEN, SEALED, Case

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
SECTION = "## Decided cases (`bench/corpus_figures.py`)"
HEADER = (
    "| ruleset version | recorded | open: cases / contradicted / court's answer where ≥ 4 inputs "
    "| sealed: cases / contradicted / court's answer where ≥ 4 inputs | note |"
)
RULE = "|---|---|---|---|---|"
NOW = dt.datetime.now(dt.UTC)


@dataclass(frozen=True, slots=True)
class Totals:
    cases: int = 0
    contradicted: int = 0
    filled: int = 0
    decided: int = 0

    def add(self, case: Case, verdict: str) -> Totals:
        filled = len(case.answers) >= MIN_INPUTS
        return Totals(
            self.cases + 1,
            self.contradicted + (verdict == CONTRADICTION[case.outcome]),
            self.filled + filled,
            self.decided + (filled and verdict == COURTS_ANSWER[case.outcome]),
        )

    def text(self) -> str:
        share = f" ({100 * self.decided / self.filled:.0f} %)" if self.filled else ""
        return f"{self.cases} / {self.contradicted} / {self.decided} of {self.filled}{share}"


def verdict_of(case: Case) -> str:
    rulesets = packaged_rulesets()
    if case.country == "NL":
        scored = score_engagement(
            ZelfstandigenwetRequest.model_validate(case.request), rulesets, NOW, DEFAULT_LANGUAGE, Environment.live
        )
    else:
        scored = score_cross_border(
            CrossBorderRequest.model_validate(case.request, strict=False),
            rulesets,
            NOW,
            DEFAULT_LANGUAGE,
            Environment.live,
        )
    return scored.verdict.verdict.value


def open_part() -> Totals:
    """Prints the open part case by case, and returns its totals."""
    totals = Totals()
    by_country: Counter[tuple[str, str]] = Counter()
    print("open part, case by case:")
    for case in sorted(OPEN, key=lambda case: (case.country, case.id)):
        verdict = verdict_of(case)
        totals = totals.add(case, verdict)
        filled = len(case.answers)
        mark = (
            "CONTRADICTION"
            if verdict == CONTRADICTION[case.outcome]
            else "court's answer"
            if verdict == COURTS_ANSWER[case.outcome]
            else "undecided"
        )
        if filled >= MIN_INPUTS:
            by_country[(case.country, mark)] += 1
        print(f"  {case.country} {case.id:<60} {filled:>2} inputs  {case.outcome:<15} {verdict:<7} {mark}")
    for country in ("NL", "FR", "DE", "BE"):
        marks = {mark: by_country[(country, mark)] for mark in ("court's answer", "undecided", "CONTRADICTION")}
        print(f"  {country} (≥ {MIN_INPUTS} inputs): {marks}")
    return totals


def sealed_part() -> Totals:
    """The sealed part's totals (nothing per case is kept or printed)."""
    totals = Totals()
    for case in SEALED:
        totals = totals.add(case, verdict_of(case))
    return totals


def versions() -> str:
    rulesets = packaged_rulesets()
    found = {rulesets.dutch.version, *(ruleset.version for ruleset in rulesets.cross_border.values())}
    return ", ".join(sorted(day.isoformat() for day in found))


def record(version: str, opened: Totals, sealed: Totals, note: str) -> None:
    """Writes (or replaces) the version's row of the history table in bench/RESULTS.md."""
    row = f"| {version} | {NOW.date().isoformat()} | {opened.text()} | {sealed.text()} | {note} |"
    text = RESULTS.read_text()
    if SECTION not in text:
        intro = (
            f"\n{SECTION}\n\nThe decided cases of `tests/classify/cases/` scored with each ruleset version, once per\n"
            "version: the open part (reviewed case by case) and the sealed part (totals only; chosen by a hash of the\n"
            "case id). Target on the sealed part: no contradiction, and at least 80 % of the cases filling four\n"
            f"inputs get the court's answer.\n\n{HEADER}\n{RULE}\n"
        )
        text = text.rstrip("\n") + "\n" + intro
    lines = text.split("\n")
    start = lines.index(HEADER) + 2
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    rows = [line for line in lines[start:end] if not line.startswith(f"| {version} |")]
    lines[start:end] = [*rows, row]
    RESULTS.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sealed", action="store_true", help="also compute the sealed part's totals (run it rarely: once per version)"
    )
    parser.add_argument("--record", action="store_true", help="write both parts' totals into bench/RESULTS.md")
    parser.add_argument("--label", default="", help="a note for the history row")
    args = parser.parse_args()
    version = versions()
    print(f"ruleset version(s): {version}")
    opened = open_part()
    print(f"open:   {opened.text()}  (cases / contradicted / court's answer where ≥ {MIN_INPUTS} inputs)")
    if not (args.sealed or args.record):
        return
    sealed = sealed_part()
    print(f"sealed: {sealed.text()}")
    if args.record:
        record(version, opened, sealed, args.label)


if __name__ == "__main__":
    main()
