"""What ranking the next questions costs, against the verdict it belongs to, in one process.

For every test (the Dutch one and FR, DE, BE), a fixed set of engagements is drawn at random (seeded): each input
answered yes, no or a number, or left unanswered. Only `risky` verdicts rank next questions, so only they are kept.
For each engagement, two CPU times are taken (`time.process_time_ns`, best of `--repeat`):

* verdict: the whole verdict as the endpoint builds it (`score_engagement` / `score_cross_border`: reading the
  answers, deciding, the bounds, the next questions, the advice and the verdict body), with the compiled test's
  memos emptied first, so that nothing is reused from an earlier identical pattern (the worst case);
* ranking: `decide.next_questions` alone, with the same facts, also with the memos emptied.

The printed share is ranking / verdict over the whole set. The memos make a repeated pattern cost nothing more, so
in service the share is lower still.

`--served` measures what the target speaks of, a served verdict: two servers (SQLite, one worker each, pinned to
CPU 0 one after the other), one as `serve` builds it and one whose tests rank no questions (the only change), each
sent the same `--requests` classify calls per test with engagements drawn as above (every one a new pattern to the
server), one at a time from this process. The server's CPU time per call (from /proc) is compared: the difference
is what ranking costs a served verdict; the target is at most 10 %.

`--sets` measures the bounded search for a set of answers (`decide.answer_sets`), which runs only for a `risky`
verdict that no single answer changes: for each test, `--engagements` drawn engagements as above, the patterns that
need it kept, and per pattern the CPU time of the search alone (memos emptied, best of `--repeat`) against the whole
verdict, with how many searches found a set, found that none would, or stopped at the budget (SET_BUDGET verdicts).

    .venv/bin/python bench/next_questions.py [--engagements 400] [--repeat 5] [--seed 7]
    .venv/bin/python bench/next_questions.py --served [--requests 1000]
    .venv/bin/python bench/next_questions.py --sets [--engagements 2000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import uvicorn

sys.path.insert(0, str(Path(__file__).parent))
import harness

from compliance_api.classify import crossborder, decide, dutch
from compliance_api.classify.decide import SET_BUDGET, AnswerSet, answer_sets, next_questions
from compliance_api.classify.language import DEFAULT_LANGUAGE
from compliance_api.classify.ruleset import Rulesets, packaged_rulesets
from compliance_api.classify.schemas import CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.classify.service import score_cross_border, score_engagement
from compliance_api.classify.verdict import Country
from compliance_api.kit.environment import Environment

NOW = dt.datetime(2026, 11, 27, 12, tzinfo=dt.UTC)
NUMBERS = {
    "hourly_rate_eur": (20, 150),
    "months_duration": (1, 36),
    "days_per_week": (1, 5),
    "other_clients_count": (0, 8),
}


def _dutch_bodies(rulesets: Rulesets, count: int, draw: random.Random) -> list[ZelfstandigenwetRequest]:
    inputs = [question.input for question in rulesets.dutch.questions]
    bodies: list[ZelfstandigenwetRequest] = []
    while len(bodies) < count:
        engagement: dict[str, Any] = {}
        for name in inputs:
            if draw.random() < 0.5:
                continue
            low_high = NUMBERS.get(name)
            engagement[name] = draw.randint(*low_high) if low_high else draw.random() < 0.5
        bodies.append(ZelfstandigenwetRequest.model_validate({"engagement": engagement}))
    return bodies


def _cross_border_bodies(rulesets: Rulesets, country: Country, count: int, draw: random.Random) -> list[Any]:
    names = rulesets.cross_border[country].criterion_names
    return [
        CrossBorderRequest.model_validate(
            {"country": country.value, "criteria": {n: draw.random() < 0.5 for n in names if draw.random() < 0.5}}
        )
        for _ in range(count)
    ]


def _best(work: Callable[[], object], forget: Callable[[], None], repeat: int) -> int:
    best = None
    for _ in range(repeat):
        forget()
        start = time.process_time_ns()
        work()
        spent = time.process_time_ns() - start
        best = spent if best is None else min(best, spent)
    assert best is not None
    return best


def _forget(test: dutch.DutchTest | crossborder.CrossBorderTest) -> Callable[[], None]:
    memos = [memo for memo in vars(test).values() if isinstance(memo, dict) and type(memo).__name__ == "Memo"]

    def forget() -> None:
        for memo in memos:
            memo.clear()

    return forget


def _measure_dutch(rulesets: Rulesets, bodies: list[ZelfstandigenwetRequest], repeat: int) -> tuple[int, int, int]:
    test = dutch.dutch_test(rulesets.dutch, NOW.date())
    forget = _forget(test)
    verdict_ns = ranking_ns = kept = 0
    for body in bodies:
        engagement = body.engagement.model_dump()
        true, false, _ = test.read(engagement)
        current = test.verdict(true, false)
        if current.value != "risky":
            continue
        kept += 1
        verdict_ns += _best(
            partial(score_engagement, body, rulesets, NOW, DEFAULT_LANGUAGE, Environment.live), forget, repeat
        )
        rank = partial(next_questions, test.table, test.branch_verdict, true, false, current, test.order, test.rules)
        ranking_ns += _best(partial(rank, test.touching, test.weight), forget, repeat)
    return verdict_ns, ranking_ns, kept


def _measure_cross_border(rulesets: Rulesets, country: Country, bodies: list[Any], repeat: int) -> tuple[int, int, int]:
    ruleset = rulesets.cross_border[country]
    test = crossborder.cross_border_test(ruleset)
    forget = _forget(test)
    verdict_ns = ranking_ns = kept = 0
    for body in bodies:
        true, false = test.table.known(body.criteria)
        current = test.verdict(true, false)
        if current.value != "risky":
            continue
        kept += 1
        verdict_ns += _best(
            partial(score_cross_border, body, rulesets, NOW, DEFAULT_LANGUAGE, Environment.live), forget, repeat
        )
        rank = partial(
            next_questions, test.table, test.branch_verdict, true, false, current, ruleset.criterion_names, test.rules
        )
        ranking_ns += _best(partial(rank, test.touching, test.weight), forget, repeat)
    return verdict_ns, ranking_ns, kept


def serve(port: int, *, ranked: bool) -> None:
    """The app as `serve` builds it; unranked, its tests rank no next questions (this process only)."""
    from compliance_api.app import create_app
    from compliance_api.config import Settings
    from compliance_api.server import uvicorn_options

    if not ranked:
        setattr(decide, "next_questions", lambda *_args, **_kwargs: [])  # noqa: B010
        setattr(decide, "answer_sets", lambda *_args, **_kwargs: ((), True))  # noqa: B010
    settings = Settings()
    options = uvicorn_options(settings, host="127.0.0.1", port=port, workers=1) | {"factory": False}
    uvicorn.run(create_app(settings), **options)


class RankingServer(harness.Server):
    """This script in `--serve` mode, started and stopped like the other benchmarks' servers."""

    ranked: bool = True

    def argv(self) -> list[str]:
        return [sys.executable, __file__, "--serve", str(self.port), *(() if self.ranked else ("--unranked",))]


def _served_calls(rulesets: Rulesets, count: int, seed: int) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """`count` classify calls per test, each engagement a new pattern (most of them `risky`)."""
    draw = random.Random(seed)
    calls = {
        "NL": [
            ("/v1/classify/zelfstandigenwet", b.model_dump(mode="json", exclude_none=True))
            for b in _dutch_bodies(rulesets, count, draw)
        ]
    }
    for country in (Country.FR, Country.DE, Country.BE):
        calls[country.value] = [
            ("/v1/classify/cross-border", b.model_dump(mode="json", exclude_none=True))
            for b in _cross_border_bodies(rulesets, country, count, draw)
        ]
    return calls


def _served_cpu(ranked: bool, calls: dict[str, list[tuple[str, dict[str, Any]]]], workdir: Path) -> dict[str, float]:
    """Server CPU seconds per call for each test's calls, sent one at a time after a warm-up of 200 calls."""
    env = harness.base_env(workdir)
    harness.cli(env, workdir, "migrate")
    token = harness.create_token(env, workdir, "internal")
    server = RankingServer(f"ranked-{ranked}", env, workdir, cpu=0)
    server.ranked = ranked
    server.start()
    spent = {}
    try:
        with httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {token}"}) as client:
            for path, body in calls["NL"][:200]:
                client.post(path, json=body).raise_for_status()
            for test_name, test_calls in calls.items():
                before = harness.cpu_seconds(server.pid)
                for path, body in test_calls:
                    client.post(path, json=body).raise_for_status()
                spent[test_name] = (harness.cpu_seconds(server.pid) - before) / len(test_calls)
    finally:
        server.stop()
    return spent


def served(requests: int, seed: int) -> None:
    calls = _served_calls(packaged_rulesets(), requests, seed)
    with tempfile.TemporaryDirectory() as ranked_dir, tempfile.TemporaryDirectory() as unranked_dir:
        unranked = _served_cpu(False, calls, Path(unranked_dir))
        ranked = _served_cpu(True, calls, Path(ranked_dir))
    print(f"load average: {harness.load_average()}")
    print("| test | server CPU a call, ranked | unranked | ranking | ranking / served verdict |")
    print("|---|---:|---:|---:|---:|")
    for test_name in calls:
        cost = ranked[test_name] - unranked[test_name]
        print(
            f"| {test_name} | {ranked[test_name] * 1e6:.0f} µs | {unranked[test_name] * 1e6:.0f} µs | "
            f"{cost * 1e6:.0f} µs | {cost / ranked[test_name]:.1%} |"
        )


def _search(
    test: dutch.DutchTest | crossborder.CrossBorderTest, order: list[str], true: int, false: int
) -> tuple[tuple[AnswerSet, ...], bool]:
    current = test.verdict(true, false)
    least = test.answers_to_decide(true, false)
    return answer_sets(test.table, test.verdict, true, false, current, order, frozenset(), least)


def sets(engagements: int, repeat: int, seed: int) -> None:
    """The cost of the bounded search for a set of answers, where a verdict needs it."""
    rulesets, draw = packaged_rulesets(), random.Random(seed)
    print(f"search budget: {SET_BUDGET} verdicts; {engagements} drawn engagements per test")
    print("| test | patterns that need it | found / none would / stopped | search, µs mean | max | verdict, µs mean |")
    print("|---|---:|---|---:|---:|---:|")
    dutch_rows = [(body, body.engagement.model_dump()) for body in _dutch_bodies(rulesets, engagements, draw)]
    cases: list[tuple[str, Any, list[tuple[Any, Any]], Callable[[Any], object]]] = [
        (
            "NL",
            dutch.dutch_test(rulesets.dutch, NOW.date()),
            dutch_rows,
            lambda b: score_engagement(b, rulesets, NOW, DEFAULT_LANGUAGE, Environment.live),
        )
    ]
    for country in (Country.FR, Country.DE, Country.BE):
        test = crossborder.cross_border_test(rulesets.cross_border[country])
        rows = [(body, body.criteria) for body in _cross_border_bodies(rulesets, country, engagements, draw)]
        cases.append(
            (
                country.value,
                test,
                rows,
                lambda b: score_cross_border(b, rulesets, NOW, DEFAULT_LANGUAGE, Environment.live),
            )
        )
    for name, test, rows, score in cases:
        forget = _forget(test)
        order = list(test.order) if isinstance(test, dutch.DutchTest) else list(test.ruleset.criterion_names)
        spent: list[int] = []
        verdicts: list[int] = []
        ends = {"found": 0, "none": 0, "stopped": 0}
        for body, answers in rows:
            forget()
            true, false = test.table.known(answers)
            outcome = test.outcome(true, false)
            if outcome.verdict.value != "risky" or outcome.could_change:
                continue
            found, complete = _search(test, order, true, false)
            ends["found" if found else "none" if complete else "stopped"] += 1
            spent.append(_best(partial(_search, test, order, true, false), forget, repeat))
            verdicts.append(_best(partial(score, body), forget, repeat))
        if not spent:
            print(f"| {name} | 0 | | | | |")
            continue
        mean, worst, verdict = sum(spent) / len(spent) / 1000, max(spent) / 1000, sum(verdicts) / len(verdicts) / 1000
        print(
            f"| {name} | {len(spent)} | {ends['found']} / {ends['none']} / {ends['stopped']} | {mean:.0f} | "
            f"{worst:.0f} | {verdict:.0f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--unranked", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--served", action="store_true", help="measure served verdicts (see above)")
    parser.add_argument("--sets", action="store_true", help="measure the search for a set of answers (see above)")
    parser.add_argument("--requests", type=int, default=1000, help="classify calls per test with --served")
    parser.add_argument("--engagements", type=int, default=400, help="engagements drawn per test")
    parser.add_argument("--repeat", type=int, default=5, help="timings per engagement; the best is kept")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, ranked=not args.unranked)
        return
    if args.served:
        harness.stop_on_signals()
        served(args.requests, args.seed)
        return
    if args.sets:
        sets(args.engagements, args.repeat, args.seed)
        return
    rulesets, draw = packaged_rulesets(), random.Random(args.seed)
    rows = [("NL", *_measure_dutch(rulesets, _dutch_bodies(rulesets, args.engagements, draw), args.repeat))]
    for country in (Country.FR, Country.DE, Country.BE):
        bodies = _cross_border_bodies(rulesets, country, args.engagements, draw)
        rows.append((country.value, *_measure_cross_border(rulesets, country, bodies, args.repeat)))
    print("| test | risky verdicts | verdict, µs each | ranking, µs each | ranking / verdict |")
    print("|---|---:|---:|---:|---:|")
    for test_name, verdict_ns, ranking_ns, kept in rows:
        if not kept:
            print(f"| {test_name} | 0 | | | |")
            continue
        share = ranking_ns / verdict_ns
        print(
            f"| {test_name} | {kept} | {verdict_ns / kept / 1000:.1f} | {ranking_ns / kept / 1000:.1f} | {share:.1%} |"
        )


if __name__ == "__main__":
    main()
