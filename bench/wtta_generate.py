"""Write a synthetic WTTA register (the import CSV) of N rows with unique KvK numbers, reproducibly.

    .venv/bin/python bench/wtta_generate.py OUT.csv [--rows 1000000] [--seed 1] [--change-every 0]

`--change-every K` gives every K-th row another status than the same seed's default, to simulate a register update.
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

STATUSES = ["admitted"] * 6 + ["applied"] * 2 + ["conditionally_admitted", "suspended", "revoked", "expired"]
FIELDS = ["kvk_number", "legal_name", "admission_status", "admission_number", "admitted_at", "expires_at"]
FIRST_KVK = 10_000_000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--change-every", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with args.out.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(FIELDS)
        for i in range(args.rows):
            status = rng.choice(STATUSES)
            if args.change_every and i % args.change_every == 0:
                status = "revoked" if status != "revoked" else "admitted"
            admitted = status not in ("applied",)
            month = rng.randint(1, 12)
            writer.writerow(
                [
                    f"{FIRST_KVK + i * 7:08d}"[-8:],
                    f"Supplier {i} B.V.",
                    status,
                    f"NAU-{i:07d}" if admitted else "",
                    f"2027-{month:02d}-01" if admitted else "",
                    f"2028-{month:02d}-01" if status in ("conditionally_admitted", "expired") else "",
                ]
            )


if __name__ == "__main__":
    main()
