from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from compliance_api.cli.common import EnvOption, JsonOption, print_json, progress, read_input, run, transaction
from compliance_api.kit.environment_name import Environment
from compliance_api.rates.synthetic_seed import DEFAULT_SEED

app = typer.Typer(no_args_is_help=True, help="Rate observations and benchmarks.")


@app.command("import")
def import_rates(
    path: Annotated[Path, typer.Argument(help="A CSV (sector,region,hourly_rate_eur,observed_on) or JSON file.")],
    source: Annotated[str | None, typer.Option("--source", help="Where the observations come from.")] = None,
    env: EnvOption = Environment.live,
    as_json: JsonOption = False,
) -> None:
    """Import rate observations in one transaction and recompute the benchmarks they touch."""
    from compliance_api.config import Settings
    from compliance_api.rates import importer, service

    settings = Settings()

    async def work() -> service.RateImportResult:
        content = read_input(path)
        rows = importer.parse(content, json_format=path.suffix.lower() == ".json", today=importer.today_in_nl())
        async with transaction(settings) as session:
            with progress(len(rows), "importing") as on_progress:
                return await service.add_observations(
                    session,
                    environment=env,
                    observations=rows,
                    content_sha256=hashlib.sha256(content).hexdigest(),
                    source=(source or path.name)[:300],
                    window_months=settings.rates_window_months,
                    on_progress=on_progress,
                )

    result = run(work)
    if as_json:
        print_json(
            {
                "import_id": result.import_id,
                "rows": result.rows,
                "already_imported": result.already_imported,
                "benchmarks_recomputed": result.benchmarks,
                "environment": env.value,
            }
        )
    elif result.already_imported:
        typer.echo(f"{path} was already imported into {env.label} ({result.rows} rows); nothing changed", err=True)
    else:
        typer.echo(f"imported {result.rows} rows into {env.label}; {result.benchmarks} benchmarks recomputed", err=True)


@app.command("recompute")
def recompute(env: EnvOption = Environment.live, as_json: JsonOption = False) -> None:
    """Recompute every benchmark of an environment (after changing COMPLIANCE_RATES_WINDOW_MONTHS)."""
    from compliance_api.config import Settings
    from compliance_api.rates import service

    settings = Settings()

    async def work() -> int:
        async with transaction(settings) as session:
            return await service.recompute(session, environment=env, window_months=settings.rates_window_months)

    count = run(work)
    if as_json:
        print_json({"benchmarks": count, "environment": env.value})
    else:
        typer.echo(f"recomputed {count} benchmarks in {env.label}", err=True)


@app.command("generate")
def generate(
    env: EnvOption = Environment.test,
    seed: Annotated[int, typer.Option("--seed", help="Random seed; the same seed gives the same rows.")] = DEFAULT_SEED,
    as_of: Annotated[str | None, typer.Option("--as-of", help="Newest date (YYYY-MM-DD); default today.")] = None,
    allow_synthetic: Annotated[
        bool, typer.Option("--allow-synthetic", help="Required to put synthetic observations into production.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Replace the environment's synthetic observations with freshly generated ones (sandbox by default)."""
    from compliance_api.config import Settings
    from compliance_api.rates import fixtures, importer

    if env is Environment.live and not allow_synthetic:
        typer.echo("error: synthetic observations go into production only with --allow-synthetic", err=True)
        raise typer.Exit(1)
    settings = Settings()
    try:
        newest = date.fromisoformat(as_of) if as_of else importer.today_in_nl()
    except ValueError:
        typer.echo(f"error: --as-of {as_of!r} is not a date (YYYY-MM-DD)", err=True)
        raise typer.Exit(1) from None

    async def work() -> int:
        async with transaction(settings) as session:
            return await fixtures.seed_synthetic(
                session, env, seed=seed, as_of=newest, window_months=settings.rates_window_months
            )

    rows = run(work)
    if as_json:
        print_json({"rows": rows, "seed": seed, "as_of": newest.isoformat(), "environment": env.value})
    else:
        typer.echo(f"generated {rows} synthetic observations in {env.label} (seed {seed}, as of {newest})", err=True)
