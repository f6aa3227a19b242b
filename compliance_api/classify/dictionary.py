"""Training a verdict dictionary for `classify/compression.py`: `python -m compliance_api.classify.dictionary ID`
writes `classify/dictionaries/verdicts-ID.zdict`, trained on verdicts of both tests, every country and language.

Train a new one (a new id, never a replaced file) when the rulesets' texts have changed much, then set
`compression.CURRENT_DICTIONARY` to it; rows compressed with older dictionaries keep naming theirs.
"""

from __future__ import annotations

import datetime as dt
import random
import sys

import orjson
import zstandard

from compliance_api.classify.compression import DICTIONARIES, DICTIONARY_BYTES, LEVEL
from compliance_api.classify.language import Language
from compliance_api.classify.ruleset import ENGAGEMENT_FIELDS, packaged_rulesets
from compliance_api.classify.schemas import CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.classify.service import score_cross_border, score_engagement
from compliance_api.kit.environment import Environment

AS_OF = (dt.date(2025, 6, 1), dt.date(2026, 3, 1), dt.date(2026, 11, 1), dt.date(2027, 6, 1))
"""Dates either side of the thresholds' changes: some texts depend on what is in force."""


NUMBERS = ("hourly_rate_eur", "months_duration", "days_per_week", "other_clients_count")
YES_NO_FIELDS = tuple(name for name in ENGAGEMENT_FIELDS if name not in NUMBERS)
"""The engagement's yes/no answers, every one the ruleset reads."""


def training_samples(count: int, seed: int = 0) -> list[bytes]:
    """Verdicts as the API answers them, of both tests, every country and language, from answers of every
    completeness (none answered to all)."""
    rulesets = packaged_rulesets()
    chance = random.Random(seed)  # noqa: S311  (varied sample answers, not secrets)
    now = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    samples: list[bytes] = []
    for number in range(count):
        language = list(Language)[(number // 2) % len(Language)]  # every language for each test
        answered = chance.random()
        tracked: dict[str, object] = {"as_of": chance.choice(AS_OF).isoformat()}
        if chance.random() < 0.5:
            tracked["reference"] = f"contract-{chance.randrange(10**6)}"
        if number % 2:
            values = {
                "hourly_rate_eur": round(chance.uniform(15, 150), chance.choice([0, 2])),
                "months_duration": chance.randrange(1, 48),
                "days_per_week": chance.randrange(1, 6),
                "other_clients_count": chance.randrange(0, 12),
                **{name: chance.random() < 0.5 for name in YES_NO_FIELDS},
            }
            engagement = {name: value for name, value in values.items() if chance.random() < answered}
            body = ZelfstandigenwetRequest.model_validate({"engagement": engagement, **tracked})
            verdict = score_engagement(body, rulesets, now, language, Environment.live).verdict
        else:
            country = sorted(rulesets.cross_border)[(number // 8) % len(rulesets.cross_border)]  # and each country
            names = rulesets.cross_border[country].criterion_names
            criteria = {name: chance.random() < 0.5 for name in names if chance.random() < answered}
            request = CrossBorderRequest.model_validate({"country": country, "criteria": criteria, **tracked})
            verdict = score_cross_border(request, rulesets, now, language, Environment.live).verdict
        samples.append(orjson.dumps(verdict))
    return samples


def train(dict_id: int, count: int = 4000) -> bytes:
    """A new dictionary of `DICTIONARY_BYTES` trained on `count` sample verdicts, with id `dict_id`."""
    samples: list[bytes | bytearray | memoryview[int]] = [*training_samples(count)]
    dictionary = zstandard.train_dictionary(DICTIONARY_BYTES, samples, dict_id=dict_id, level=LEVEL)
    return dictionary.as_bytes()


def main(arguments: list[str]) -> None:
    new_id = int(arguments[0])
    target = DICTIONARIES / f"verdicts-{new_id}.zdict"
    if target.exists():
        raise SystemExit(f"{target} exists: a dictionary is never replaced, rows compressed with it need it")
    target.write_bytes(train(new_id))
    sys.stdout.write(f"wrote {target} ({target.stat().st_size} bytes); set CURRENT_DICTIONARY = {new_id}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
