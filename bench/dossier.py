"""What a dossier costs: one PDF of a verdict with three re-scores, and the audit export of N dossiers.

`pdf`: an in-process app on SQLite in a temporary folder; a Dutch verdict (EUR 37 an hour) re-scored three times
(2026, 2025, 2026 thresholds: three changes of verdict); then `GET /v1/classifications/{id}/dossier` with
`Accept: application/pdf`, `--rounds` times one after the other. Prints the median and p90 wall time of the whole
request, and the CPU time of the process per request. Target: median <= 300 ms.

`standards`: the same dossier compiled with each PDF standard the template could meet (plain, PDF/A-3, PDF/UA-1,
tagged or not): the CPU time of the compilation alone and the size of the PDF.

`export`: a fresh schema in the PostgreSQL database given (every table is dropped first), N classifications made
through the classify service in one day (three Dutch for every FR cross-border one), then
`compliance-api classifications export` of that day as a child process. Prints the wall time, the dossiers per
second, the export process's resident memory sampled every half second (at 10%, 50% and 100% of the run, and its
peak, `VmHWM`, with when it came) with the load average at those moments, the peak of the largest PDF worker, and the
CPU time per dossier (the export's and its workers'), from which the time on otherwise idle CPUs follows, and each
dossier's size in the zip
(PDF and JSON together, deflated; median and p90). Targets: 10,000 in <= 10 minutes, memory flat (at most 200 MiB per
process), at most 100 kB per dossier in the zip at the median.

`fairness`: the same app with a second account; that account's PDF alone (one render time), then while the first
account's burst of `--burst` PDF requests waits for the renderer: with accounts taking turns (the service's) and with
one line for all (as before), alternated `--rounds` times. Target: the other PDF waits at most one render.

    .venv/bin/python bench/dossier.py pdf [--rounds 40]
    .venv/bin/python bench/dossier.py standards [--rounds 25]
    .venv/bin/python bench/dossier.py fairness [--burst 60] [--rounds 3]
    .venv/bin/python bench/dossier.py export --database-url postgresql://postgres@127.0.0.1:5432/NAME --count 1000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import io
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import orjson
import typst
from httpx import ASGITransport, AsyncClient
from pypdf import PdfReader

from compliance_api.accounts import service as accounts
from compliance_api.accounts.models import Plan, UserKind
from compliance_api.app import create_app
from compliance_api.auth import service as auth_service
from compliance_api.auth.caller import Caller
from compliance_api.classify import service as classify
from compliance_api.classify.rescore import rescore
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.config import Settings
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.dossier import endpoints
from compliance_api.dossier.render import page_data
from compliance_api.dossier.schemas import Dossier
from compliance_api.dossier.typeset import TEMPLATE, Typesetter
from compliance_api.kit.batch_writer import batch_writer_for
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.fair_limiter import FairLimiter
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.migrate import upgrade
from compliance_api.ratelimit.tiers import tier_for

# Every answer favourable but the rate: safe under the 2025 threshold (EUR 36), not under the 2026 one (EUR 38).
ENGAGEMENT = {
    "hourly_rate_eur": 37,
    "months_duration": 3,
    "days_per_week": 2,
    "own_tools": True,
    "own_liability": True,
    "sets_own_hours": True,
    "can_delegate": True,
    "works_under_instructions": False,
    "client_supervises_work": False,
    "embedded_in_organisation": False,
    "structural_work": False,
    "same_work_as_employees": False,
    "terms_set_by_client": False,
    "acts_as_entrepreneur": True,
}
DUTCH = {"engagement": ENGAGEMENT, "as_of": "2025-03-01", "reference": "bench-37", "monitor": True}
CROSS_BORDER = {"country": "FR", "criteria": {"client_gives_orders": True, "client_can_sanction": False}}
RESCORE_DATES = (dt.date(2026, 3, 1), dt.date(2025, 6, 1), dt.date(2026, 9, 1))
DAY = dt.datetime(2026, 3, 10, tzinfo=dt.UTC)


async def _account(app: Any, email: str) -> dict[str, str]:
    """A pro account with a live token: its headers."""
    sessionmaker = create_sessionmaker(app.state.services.engine)
    async with sessionmaker.begin() as session:
        user = await accounts.create(session, email=email, kind=UserKind.business, plan=Plan.pro)
        _, token = await auth_service.create(
            session, user=user, environment=Environment.live, name="bench", pepper=app.state.services.pepper
        )
    return {"Authorization": f"Bearer {token}"}


@contextlib.asynccontextmanager
async def _rescored_verdict() -> AsyncIterator[tuple[AsyncClient, dict[str, str], str, Any]]:
    """An in-process app on SQLite with the Dutch verdict re-scored three times: a client, its headers, the dossier's
    URL, and the app."""
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(
            database_url=f"sqlite:///{folder}/bench.db",
            var_dir=Path(folder),
            secret_key=secrets.token_urlsafe(48),
            access_log=False,
        )
        migrated = create_engine(settings.resolved_database_url)
        await upgrade(migrated)
        await migrated.dispose()
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            sessionmaker = create_sessionmaker(app.state.services.engine)
            headers = await _account(app, "bench@example.com")
            async with AsyncClient(transport=ASGITransport(app=app), base_url="http://api.bench") as client:
                made = (await client.post("/v1/classify/zelfstandigenwet", json=DUTCH, headers=headers)).json()
                now = utcnow()
                for as_of in RESCORE_DATES:
                    async with sessionmaker.begin() as session:
                        report = await rescore(
                            session, packaged_rulesets(), Environment.live, as_of=as_of, now=now, since=DAY
                        )
                    assert len(report.changes) == 1, "each re-score changes the verdict"
                yield client, headers, f"/v1/classifications/{made['id']}/dossier", app


async def pdf(rounds: int) -> dict[str, Any]:
    async with _rescored_verdict() as (client, headers, url, _):
        pdf_headers = {**headers, "Accept": "application/pdf"}
        first = await client.get(url, headers=pdf_headers)  # warm-up: fonts, template, first compiler
        assert first.status_code == 200, first.text
        walls, cpus = [], []
        for _ in range(rounds):
            cpu, started = time.process_time(), time.perf_counter()
            answer = await client.get(url, headers=pdf_headers)
            walls.append((time.perf_counter() - started) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
            assert answer.status_code == 200
    return {
        "rounds": rounds,
        "pages": len(PdfReader(io.BytesIO(first.content)).pages),
        "bytes": len(first.content),
        "median_ms": statistics.median(walls),
        "p90_ms": statistics.quantiles(walls, n=10)[-1],
        "cpu_median_ms": statistics.median(cpus),
    }


class _FirstComeFirstServed(FairLimiter[Any]):
    """The renderer as it was (`anyio.CapacityLimiter(1)`): every account in one line."""

    @contextlib.asynccontextmanager
    async def slot(self, group: Any) -> AsyncIterator[None]:
        async with super().slot(None):
            yield


async def _burst_and_one(
    client: AsyncClient, burst: list[dict[str, str]], url: str, other: tuple[dict[str, str], str]
) -> tuple[float, int]:
    """Seconds the other account's PDF takes while one account's burst of PDF requests waits for the renderer, and
    how many of the burst were waiting when it came."""
    pending = [asyncio.create_task(client.get(url, headers=headers)) for headers in burst]
    # until every request of the burst has reached the renderer: waiting, rendering (one) or done (a bench polls;
    # the limiter has no event for it)
    while endpoints.RENDERING.waiting + 1 + sum(task.done() for task in pending) < len(burst):  # noqa: ASYNC110
        await asyncio.sleep(0.001)
    waiting = endpoints.RENDERING.waiting
    started = time.perf_counter()
    answer = await client.get(other[1], headers=other[0])
    seconds = time.perf_counter() - started
    assert answer.status_code == 200
    assert all(done.status_code == 200 for done in await asyncio.gather(*pending))
    return seconds, waiting


async def fairness(burst: int, rounds: int) -> dict[str, Any]:
    """Another account's PDF alone, then during a burst of `burst` PDF requests from one account: with the fair
    renderer (accounts in turn) and with one line for all (as before), alternated `rounds` times."""
    async with _rescored_verdict() as (client, headers, url, app):
        other_headers = await _account(app, "other@example.com")
        made = (await client.post("/v1/classify/zelfstandigenwet", json=DUTCH, headers=other_headers)).json()
        other = ({**other_headers, "Accept": "application/pdf"}, f"/v1/classifications/{made['id']}/dossier")
        pdf_headers = [{**headers, "Accept": "application/pdf"}] * burst
        alone = []
        for _ in range(5):
            started = time.perf_counter()
            assert (await client.get(other[1], headers=other[0])).status_code == 200
            alone.append(time.perf_counter() - started)
        fair_limiter = endpoints.RENDERING
        fair, one_line = [], []
        try:
            for _ in range(rounds):
                endpoints.RENDERING = fair_limiter
                fair.append(await _burst_and_one(client, pdf_headers, url, other))
                endpoints.RENDERING = _FirstComeFirstServed(1)
                one_line.append(await _burst_and_one(client, pdf_headers, url, other))
        finally:
            endpoints.RENDERING = fair_limiter
    render = statistics.median(alone)
    return {
        "burst": burst,
        "rounds": rounds,
        "other_alone_ms": round(render * 1000),
        "burst_waiting_when_other_came": [waiting for _, waiting in fair + one_line],
        "other_during_burst_fair_ms": [round(seconds * 1000) for seconds, _ in fair],
        "other_during_burst_one_line_ms": [round(seconds * 1000) for seconds, _ in one_line],
        "fair_in_render_times": round(statistics.median(seconds for seconds, _ in fair) / render, 2),
        "one_line_in_render_times": round(statistics.median(seconds for seconds, _ in one_line) / render, 2),
    }


# What the PDF could also be: (PDF standards, tagged). The service writes PDF/A-3u untagged (dossier/typeset.py).
STANDARDS: dict[str, tuple[list[typst.PDFStandard], bool]] = {
    "plain": ([], False),
    "plain, tagged": ([], True),
    "PDF/A-3b": (["a-3b"], False),
    "PDF/A-3u (the service's)": (["a-3u"], False),
    "PDF/A-3a (tagged)": (["a-3a"], True),
    "PDF/UA-1 (tagged)": (["ua-1"], True),
    "PDF/A-3u + PDF/UA-1 (tagged)": (["a-3u", "ua-1"], True),
}


async def standards(rounds: int) -> dict[str, Any]:
    """The same dossier compiled `rounds` times per PDF standard, each time issued a second later (a new signature,
    as every request signs a fresh copy): median CPU of the compilation alone, and the size."""
    async with _rescored_verdict() as (client, headers, url, _):
        signed = (await client.get(url, headers=headers)).json()
    dossier, jws = Dossier.model_validate(signed["dossier"]), signed["jws"]
    setter = Typesetter()
    compiler = typst.Compiler(str(TEMPLATE), font_paths=setter.fonts, ignore_system_fonts=True)
    found: dict[str, Any] = {}
    for name, (wanted, tagged) in STANDARDS.items():
        cpus, size = [], 0
        for index in range(rounds):
            issued = dossier.model_copy(update={"issued_at": dossier.issued_at + dt.timedelta(seconds=index + 1)})
            page = {**page_data(issued, jws[:-8] + f"{index:08d}"), "font": setter.family}
            data = orjson.dumps(page).decode()
            cpu = time.process_time()
            made = compiler.compile(sys_inputs={"data": data}, pdf_standards=wanted, pdf_tags=tagged)
            cpus.append((time.process_time() - cpu) * 1000)
            assert isinstance(made, bytes)
            size = len(made)
        found[name] = {"cpu_median_ms": round(statistics.median(cpus[1:]), 1), "bytes": size}
    return found


async def _seed(url: str, count: int) -> None:
    """A fresh schema with `count` classifications of one account, made through the classify service on DAY."""
    admin = await asyncpg.connect(url)
    try:
        await admin.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    finally:
        await admin.close()
    engine = create_engine(url.replace("postgresql://", "postgresql+asyncpg://"))
    await upgrade(engine)
    sessionmaker = create_sessionmaker(engine)
    async with sessionmaker.begin() as session:
        user = await accounts.create(session, email="bench@example.com", kind=UserKind.business, plan=Plan.pro)
    caller = Caller(
        user.id, uuid.uuid4(), Environment.live, Plan.pro, UserKind.business, tier_for(Plan.pro, Environment.live), "0"
    )
    audit = GroupCommit(batch_writer_for(engine))
    dutch = ZelfstandigenwetRequest.model_validate(DUTCH)
    french = CrossBorderRequest.model_validate(CROSS_BORDER, strict=False)
    rulesets = packaged_rulesets()
    try:
        for start in range(0, count, 1000):
            calls = [
                classify.classify_cross_border(audit, caller, french, rulesets, DAY + dt.timedelta(seconds=index))
                if index % 4 == 3
                else classify.classify_engagement(audit, caller, dutch, rulesets, DAY + dt.timedelta(seconds=index))
                for index in range(start, min(start + 1000, count))
            ]
            await asyncio.gather(*calls)
    finally:
        await audit.close()
        await engine.dispose()


# Run in the export's own process: the CLI, then its peak memory and CPU times, as one JSON line. The peak is VmHWM,
# not ru_maxrss: Linux carries ru_maxrss across exec, so a process started by this (large) bench process would report
# this process's size at the fork as its own peak (205 MiB for an export that never exceeded 167 MiB).
CHILD = """
import json, resource, sys
from compliance_api.cli import main
try:
    main()
finally:
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    print(json.dumps({
        "peak_kib": int(status["VmHWM"].split()[0]),
        "cpu_seconds": own.ru_utime + own.ru_stime,
        "worker_cpu_seconds": workers.ru_utime + workers.ru_stime,
    }), file=sys.stderr)
"""


def _rss_kib(pid: int) -> tuple[int, int] | None:
    """The process's resident memory now and its peak so far (VmHWM: when the peak came, which sampling misses)."""
    try:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])
    except (FileNotFoundError, KeyError):
        return None


def _children(pid: int) -> list[int]:
    """The export's child processes (its PDF workers and multiprocessing's resource tracker)."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def _sizes_per_dossier(out: Path) -> dict[str, list[int]]:
    """Each dossier's PDF and JSON together as the zip holds them (compressed) and as they unzip, and its PDF."""
    zipped: dict[str, int] = {}
    unzipped: dict[str, int] = {}
    pdf: list[int] = []
    with zipfile.ZipFile(out) as archive:
        for info in archive.infolist():
            if info.filename.startswith("dossiers/"):
                stem = info.filename.rsplit(".", 1)[0]
                zipped[stem] = zipped.get(stem, 0) + info.compress_size
                unzipped[stem] = unzipped.get(stem, 0) + info.file_size
                if info.filename.endswith(".pdf"):
                    pdf.append(info.file_size)
    return {"zipped": list(zipped.values()), "unzipped": list(unzipped.values()), "pdf": pdf}


def export(url: str, count: int) -> dict[str, Any]:
    asyncio.run(_seed(url, count))
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "export.zip"
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "COMPLIANCE_VAR_DIR": folder,
            "COMPLIANCE_SECRET_KEY": secrets.token_urlsafe(48),
        }
        command = [sys.executable, "-c", CHILD, "classifications", "export", "--from", "2026-03-10", "--to"]
        command += ["2026-03-10", "--out", str(out), "--json"]
        started = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        samples: list[tuple[float, int, float]] = []
        peaks_seen: list[tuple[float, int]] = []
        worker_peak = 0  # the largest VmHWM seen of the export's PDF workers (sampled: their last 0.5 s unseen)
        while child.poll() is None:
            memory = _rss_kib(child.pid)
            if memory is not None:
                samples.append((time.perf_counter() - started, memory[0], os.getloadavg()[0]))
                peaks_seen.append((time.perf_counter() - started, memory[1]))
            for worker in _children(child.pid):
                worker_peak = max(worker_peak, (_rss_kib(worker) or (0, 0))[1])
            time.sleep(0.5)  # a sampling interval, not a wait for a result
        seconds = time.perf_counter() - started
        stdout, stderr = child.communicate()
        assert child.returncode == 0, stderr
        written = json.loads(stdout)["dossiers"]
        peaks = json.loads(stderr.strip().splitlines()[-1])
        size = out.stat().st_size
        per_dossier = _sizes_per_dossier(out)

    def at(share: float) -> tuple[int, float]:
        return next(((rss, load) for moment, rss, load in samples if moment >= share * seconds), samples[-1][1:])

    assert written == count, written
    return {
        "count": count,
        "seconds": seconds,
        "per_second": count / seconds,
        "rss_mib_10_50_100": [round(at(share)[0] / 1024) for share in (0.1, 0.5, 0.99)],
        "load_10_50_100": [round(at(share)[1], 1) for share in (0.1, 0.5, 0.99)],
        "peak_mib": round(peaks["peak_kib"] / 1024),
        # when the peak was reached: the first sample that saw the highest VmHWM, as a share of the run
        "peak_at_share": round(next(at for at, hwm in peaks_seen if hwm == peaks_seen[-1][1]) / seconds, 2),
        "worker_peak_mib": round(worker_peak / 1024),
        "zip_mib": round(size / 2**20, 1),
        "per_dossier_in_zip_kb_median": round(statistics.median(per_dossier["zipped"]) / 1000, 1),
        "per_dossier_in_zip_kb_p90": round(statistics.quantiles(per_dossier["zipped"], n=10)[-1] / 1000, 1),
        "per_dossier_unzipped_kb_median": round(statistics.median(per_dossier["unzipped"]) / 1000, 1),
        "pdf_kb_median": round(statistics.median(per_dossier["pdf"]) / 1000, 1),
        "workers": os.cpu_count(),
        # CPU time does not depend on what else the machine runs: with every CPU to itself, the export takes about
        # (own + workers' CPU seconds) / CPUs.
        "cpu_ms_per_dossier": round(1000 * (peaks["cpu_seconds"] + peaks["worker_cpu_seconds"]) / count),
        "seconds_on_idle_cpus": round((peaks["cpu_seconds"] + peaks["worker_cpu_seconds"]) / (os.cpu_count() or 1)),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    pdf_command = commands.add_parser("pdf")
    pdf_command.add_argument("--rounds", type=int, default=40)
    standards_command = commands.add_parser("standards")
    standards_command.add_argument("--rounds", type=int, default=25)
    fairness_command = commands.add_parser("fairness")
    fairness_command.add_argument("--burst", type=int, default=60)
    fairness_command.add_argument("--rounds", type=int, default=3)
    export_command = commands.add_parser("export")
    export_command.add_argument("--database-url", required=True)
    export_command.add_argument("--count", type=int, default=1000)
    arguments = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if arguments.command == "pdf":
        print(json.dumps(asyncio.run(pdf(arguments.rounds))))
    elif arguments.command == "fairness":
        print(json.dumps(asyncio.run(fairness(arguments.burst, arguments.rounds))))
    elif arguments.command == "standards":
        print(json.dumps(asyncio.run(standards(arguments.rounds)), indent=1))
    else:
        print(json.dumps(export(arguments.database_url, arguments.count)))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
