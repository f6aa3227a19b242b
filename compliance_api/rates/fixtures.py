"""Synthetic rate observations for the sandbox: what `compliance-api demo` and `rates generate` store."""

from __future__ import annotations

import hashlib
from datetime import date
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.config import Settings
from compliance_api.kit.environment import Environment
from compliance_api.rates import service, synthetic
from compliance_api.rates.importer import today_in_nl
from compliance_api.rates.synthetic_seed import DEFAULT_SEED


async def seed_synthetic(
    session: AsyncSession, environment: Environment, *, seed: int, as_of: date, window_months: int
) -> int:
    """Replace the environment's synthetic observations with one generator run; returns the rows stored."""
    await service.delete_synthetic(session, environment=environment, window_months=window_months)
    rows = synthetic.generate(seed=seed, as_of=as_of, window_months=window_months)
    label = synthetic.source_label(seed, as_of)
    await service.add_observations(
        session,
        environment=environment,
        observations=rows,
        content_sha256=hashlib.sha256(label.encode()).hexdigest(),
        source=label,
        synthetic=True,
        window_months=window_months,
    )
    return len(rows)


async def create_demo_rates(session: AsyncSession, environment: Environment = Environment.test) -> dict[str, Any]:
    """Synthetic observations (flagged so) as of today, with the default seed."""
    as_of = today_in_nl()
    rows = await seed_synthetic(
        session,
        environment,
        seed=DEFAULT_SEED,
        as_of=as_of,
        window_months=Settings().rates_window_months,
    )
    return {"synthetic_observations": rows, "seed": DEFAULT_SEED, "as_of": as_of.isoformat()}
