"""Time and peak memory of `compliance-api dac7 export` on PostgreSQL: 100,000 sellers with four quarters each.

Seeds, in a database of its own, a complete operator and N complete sellers (sealed identities, one personal-services
activity per quarter of the year) in production, and a baseline of N/10 sellers the same way in the sandbox; then runs
`compliance-api dac7 export --year Y --out FILE --json` once per environment, each a separate process whose wall time
and own peak resident memory (`ru_maxrss` from `os.wait4`) are measured. Streaming means the production peak stays
close to the baseline's (ratio near 1) while the time grows about tenfold. Targets: at most 60 s and 200 MiB for
100,000 sellers. The seeded rows are deleted at the end.

    .venv/bin/python bench/dac7_export.py [--sellers 100000] [--database compliance_bench_dac7] [--validate]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from harness import CLI, SECRET_KEY, ensure_pg_database
from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.dac7.fixtures import DEMO_OPERATOR
from compliance_api.dac7.identity import Dac7Address, Dac7FinancialAccount, Dac7Tin, SellerIdentity
from compliance_api.dac7.models import ActivityType, Dac7Activity, Dac7Operator, Dac7Report, Dac7Seller
from compliance_api.dac7.operator import set_operator
from compliance_api.dac7.sealing import IdentityBox
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.kit.environment import Environment

TARGET_SECONDS = 60.0
TARGET_MIB = 200.0
CHUNK = 5_000
EMAIL_DOMAIN = "bench-dac7.example.com"
IDENTITY = SellerIdentity(
    first_name="Jan",
    last_name="de Vries",
    date_of_birth=dt.date(1990, 4, 1),
    address=Dac7Address(country="NL", street="Damrak", building="1", post_code="1012 LG", city="Amsterdam"),
    tins=[Dac7Tin(tin="111222333", issued_by="NL")],
    financial_account=Dac7FinancialAccount(iban="NL91ABNA0417164300", holder="J. de Vries"),
)


def _env(url: str) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": url, "REDIS_URL": "", "COMPLIANCE_SECRET_KEY": SECRET_KEY}


async def _seed_chunk(session: AsyncSession, environment: Environment, year: int, count: int, box: IdentityBox) -> None:
    now = dt.datetime.now(dt.UTC)
    users = [uuid.uuid4() for _ in range(count)]
    sellers = [uuid.uuid4() for _ in range(count)]
    await session.execute(
        insert(User),
        [{"id": u, "email": f"{u.hex}@{EMAIL_DOMAIN}", "kind": UserKind.freelancer, "plan": Plan.free} for u in users],
    )
    await session.execute(
        insert(Dac7Seller),
        [
            {
                "id": s,
                "user_id": u,
                "environment": environment,
                "member_state": "NL",
                "kind": "individual",
                "identity_sealed": box.seal(IDENTITY, s),
                "created_at": now,
                "updated_at": now,
            }
            for u, s in zip(users, sellers, strict=True)
        ],
    )
    await session.execute(
        insert(Dac7Activity),
        [
            {
                "external_id": f"{s.hex}-{quarter}",
                "seller_id": s,
                "environment": environment,
                "activity_type": ActivityType.personal_services,
                "activity_date": dt.date(year, quarter * 3, 1),
                "year": year,
                "quarter": quarter,
                "currency": "EUR",
                "consideration_cents": 100_000 + quarter,
                "fees_cents": 10_000,
                "taxes_cents": 0,
                "imported_at": now,
            }
            for s in sellers
            for quarter in (1, 2, 3, 4)
        ],
    )


async def seed(url: str, year: int, counts: dict[Environment, int]) -> None:
    engine = create_engine(url.replace("postgresql://", "postgresql+asyncpg://"))
    sessionmaker = create_sessionmaker(engine)
    box = IdentityBox(SECRET_KEY.encode())
    try:
        for environment, total in counts.items():
            async with sessionmaker.begin() as session:
                await set_operator(session, environment, DEMO_OPERATOR, dt.datetime.now(dt.UTC))
            for start in range(0, total, CHUNK):
                async with sessionmaker.begin() as session:
                    await _seed_chunk(session, environment, year, min(CHUNK, total - start), box)
    finally:
        await engine.dispose()


async def clean(url: str) -> None:
    engine = create_engine(url.replace("postgresql://", "postgresql+asyncpg://"))
    try:
        async with create_sessionmaker(engine).begin() as session:
            bench_users = select(User.id).where(User.email.like(f"%@{EMAIL_DOMAIN}"))
            bench_sellers = select(Dac7Seller.id).where(Dac7Seller.user_id.in_(bench_users))
            await session.execute(delete(Dac7Report).where(Dac7Report.seller_id.in_(bench_sellers)))
            await session.execute(delete(Dac7Activity).where(Dac7Activity.seller_id.in_(bench_sellers)))
            await session.execute(delete(Dac7Seller).where(Dac7Seller.user_id.in_(bench_users)))
            await session.execute(delete(User).where(User.email.like(f"%@{EMAIL_DOMAIN}")))
            await session.execute(delete(Dac7Operator))
    finally:
        await engine.dispose()


@dataclass(frozen=True)
class Measured:
    seconds: float
    cpu_seconds: float
    peak_mib: float
    sellers: int
    size: int


def measured_export(url: str, environment: Environment, year: int, out: Path) -> Measured:
    command = [str(CLI), "dac7", "export", "--year", str(year), "--env", environment.value, "--out", str(out), "--json"]
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(command, env=_env(url), stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        stdout.seek(0)
        stderr.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"export failed:\n{stderr.read().decode()}")
        result = json.loads(stdout.read())
    return Measured(
        seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, int(result["sellers"]), out.stat().st_size
    )  # KiB on Linux


def validate(path: Path) -> int:
    """Schema errors of the file (lxml and the OECD schema under tests/, as the tests use them)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.dac7.dpi_schema import schema_errors

    return len(schema_errors(path.read_bytes()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sellers", type=int, default=100_000)
    parser.add_argument("--database", default="compliance_bench_dac7")
    parser.add_argument("--validate", action="store_true", help="also validate the big file against the OECD schema")
    args = parser.parse_args()
    url = f"postgresql://postgres@127.0.0.1:5432/{args.database}"
    year = dt.date.today().year - 1
    asyncio.run(ensure_pg_database(args.database))
    subprocess.run([str(CLI), "migrate"], env=_env(url), check=True, capture_output=True)
    asyncio.run(clean(url))
    baseline = max(args.sellers // 10, 1)
    started = time.perf_counter()
    asyncio.run(seed(url, year, {Environment.test: baseline, Environment.live: args.sellers}))
    print(f"seeded {args.sellers} + {baseline} sellers with 4 quarters each in {time.perf_counter() - started:.1f} s")
    try:
        with tempfile.TemporaryDirectory() as folder:
            small = measured_export(url, Environment.test, year, Path(folder) / "baseline.xml")
            big_path = Path(folder) / "dac7.xml"
            big = measured_export(url, Environment.live, year, big_path)
            errors = validate(big_path) if args.validate else None
    finally:
        asyncio.run(clean(url))
    for label, run in ((f"baseline ({baseline} sellers, sandbox)", small), (f"{args.sellers} sellers", big)):
        print(
            f"{label}: {run.seconds:.1f} s ({run.cpu_seconds:.1f} s CPU), peak {run.peak_mib:.0f} MiB, "
            f"{run.size:,} bytes, {run.sellers} sellers"
        )
    time_ratio, memory_ratio = big.seconds / small.seconds, big.peak_mib / small.peak_mib
    print(f"ratios to the baseline: time {time_ratio:.1f}x, memory {memory_ratio:.2f}x")
    if errors is not None:
        print(f"schema errors in the {args.sellers}-seller file: {errors}")
    ok = big.seconds <= TARGET_SECONDS and big.peak_mib <= TARGET_MIB
    print(f"targets (<= {TARGET_SECONDS:.0f} s, <= {TARGET_MIB:.0f} MiB): {'met' if ok else 'MISSED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
