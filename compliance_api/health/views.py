"""The probe's findings as the API's schemas."""

from __future__ import annotations

from compliance_api import __version__
from compliance_api.health.probe import CacheAge, Check, HealthProbe, HealthStatus
from compliance_api.health.schemas import HealthOut, ReadyCheck, ReadyOut, WttaCacheOut
from compliance_api.kit.environment import Environment


def health(status: HealthStatus, region: str, cache: CacheAge, environment: Environment) -> HealthOut:
    return HealthOut(
        status=status,
        region=region,
        version=__version__,
        wtta=WttaCacheOut(imported_at=cache.refreshed_at, age_seconds=cache.age_seconds),
        livemode=environment is Environment.live,
    )


def _check(check: Check) -> ReadyCheck:
    return ReadyCheck(reachable=check.reachable, latency_ms=round(check.latency_ms, 2))


def ready(status: HealthStatus, probe: HealthProbe) -> ReadyOut:
    return ReadyOut(
        status=status,
        database=_check(probe.database),
        redis=_check(probe.redis) if probe.redis else None,
    )
