"""Complete answers decide: the share of fully answered engagements that stay `risky`, per country (target ≤ 10 %).

For each test (NL, FR, DE, BE), `--draws` complete answer sets are drawn (seeded): every input of the test is answered,
each one drawn with the frequencies its answers have in the decided cases of `tests/classify/cases/` (both parts of
the corpus: only how often each input is answered which way is read, never a case's outcome or verdict). An input no
case answers is drawn yes or no with even odds (`--unstated no`: always no, e.g. the Belgian platform criteria for
work that goes through no platform); a numeric Dutch input is drawn from the numbers the cases give. Each
set is scored as the endpoint scores it, in process, and the share of `risky` verdicts is printed with the shares of
`safe` and `unsafe`.

No tie-break the law does not make is used: the verdict is the rulesets' own (`decide.Balance`: with every input
answered, `risky` only where the stated facts weigh within `balanced_within_percent` of each other).

    .venv/bin/python bench/complete_answers.py [--draws 20000] [--seed 7] [--unstated even|no] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compliance_api.classify.crossborder import cross_border_test
from compliance_api.classify.dutch import dutch_test
from compliance_api.classify.ruleset import ENGAGEMENT_FIELDS, packaged_rulesets
from compliance_api.classify.verdict import Country, Verdict
from tests.classify.test_cases import ALL

TARGET = 0.10
AS_OF = dt.date(2026, 11, 28)
Answer = bool | int | float


def frequencies(country: str) -> dict[str, Counter[Answer]]:
    """How often each input is answered which way in the corpus's cases of `country`."""
    found: dict[str, Counter[Answer]] = {}
    for case in ALL:
        if case.country == country:
            for name, value in case.answers.items():
                found.setdefault(name, Counter())[value] += 1
    return found


def draw_answer(counts: Counter[Answer] | None, draw: random.Random, unstated_no: bool = False) -> Answer:
    """An answer drawn with the corpus's frequencies; for an input no case answers, no (`unstated_no`) or yes or no
    with even odds."""
    if not counts:
        return False if unstated_no else draw.random() < 0.5
    values = list(counts)
    return draw.choices(values, weights=[counts[value] for value in values])[0]


def dutch_numbers(draw: random.Random, counts: dict[str, Counter[Answer]], name: str) -> Answer:
    """A numeric Dutch input: a number the cases give, or, if none does, one from a plausible range."""
    if counts.get(name):
        return draw_answer(counts[name], draw)
    ranges = {"hourly_rate_eur": (15, 150), "months_duration": (1, 36), "days_per_week": (1, 5)}
    low, high = ranges.get(name, (0, 5))
    return draw.randint(low, high)


def shares(country: str, draws: int, seed: int, unstated_no: bool = False) -> Counter[Verdict]:
    rulesets = packaged_rulesets()
    draw = random.Random(seed)
    counts = frequencies(country)
    verdicts: Counter[Verdict] = Counter()
    if country == "NL":
        test = dutch_test(rulesets.dutch, AS_OF)
        kinds = {question.input: question.kind for question in rulesets.dutch.questions}
        for _ in range(draws):
            answers = {
                name: dutch_numbers(draw, counts, name)
                if kinds[name] != "boolean"
                else draw_answer(counts.get(name), draw, unstated_no)
                for name in ENGAGEMENT_FIELDS
            }
            verdicts[test.verdict(*test.table.known(answers))] += 1
        return verdicts
    ruleset = rulesets.cross_border[Country(country)]
    cross = cross_border_test(ruleset)
    for _ in range(draws):
        answers = {name: bool(draw_answer(counts.get(name), draw, unstated_no)) for name in ruleset.criterion_names}
        verdicts[cross.verdict(*cross.table.known(answers))] += 1
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument(
        "--unstated", choices=("even", "no"), default="even", help="how to draw an input no case answers"
    )
    args = parser.parse_args()
    rows = ["| test | risky | safe | unsafe | target |", "|---|---:|---:|---:|---|"]
    met = True
    for country in ("NL", "FR", "DE", "BE"):
        found = shares(country, args.draws, args.seed, args.unstated == "no")
        risky = found[Verdict.risky] / args.draws
        met &= risky <= TARGET
        status = "met" if risky <= TARGET else "NOT met"
        row = (
            f"| {country} | {100 * risky:.1f} % | {100 * found[Verdict.safe] / args.draws:.1f} % "
            f"| {100 * found[Verdict.unsafe] / args.draws:.1f} % | ≤ {100 * TARGET:.0f} % {status} |"
        )
        rows.append(row)
    text = "\n".join(rows)
    print(f"{args.draws} complete answer sets per test, seed {args.seed}, as of {AS_OF}:\n{text}")
    if args.markdown:
        args.markdown.write_text(text + "\n")
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
