"""What is unsafe in the current settings: `compliance-api check` lists it, `serve` in production refuses to start."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy.exc import SQLAlchemyError

from compliance_api.config import PasswordHashProfile, Settings, secret_problem, unknown_settings_in_environment
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.demo.fixtures import demo_accounts
from compliance_api.kit.environment import Environment
from compliance_api.passport.signing import NoPdfSigner, NoSigningKey, SigningKeys


class Severity(StrEnum):
    """`unsafe`: production refuses to start with it; `warning`: allowed, but look at it."""

    unsafe = "unsafe"
    warning = "warning"


@dataclass(frozen=True, slots=True)
class Finding:
    severity: Severity
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity:<7}  {self.code}: {self.message}"


Check = Callable[[Settings, int], Iterator[Finding]]


def _secret(settings: Settings, _: int) -> Iterator[Finding]:
    value = settings.secret_key.get_secret_value()
    if not value:
        yield Finding(
            Severity.unsafe,
            "secret_missing",
            "COMPLIANCE_SECRET_KEY is not set (embedded mode generates one under the var directory; "
            "production needs one set, at least 32 random characters).",
        )
    elif (problem := secret_problem(value)) is not None:
        yield Finding(Severity.unsafe, f"secret_{problem.kind}", f"COMPLIANCE_SECRET_KEY {problem.reason}.")


def _previous_secret(settings: Settings, _: int) -> Iterator[Finding]:
    previous = settings.secret_key_previous.get_secret_value()
    if not previous:
        return
    if previous == settings.secret_key.get_secret_value():
        yield Finding(
            Severity.unsafe,
            "secret_previous_equals_current",
            "COMPLIANCE_SECRET_KEY_PREVIOUS equals COMPLIANCE_SECRET_KEY: a rotation needs a new current key.",
        )
    elif (problem := secret_problem(previous)) is not None:
        yield Finding(
            Severity.unsafe, f"secret_previous_{problem.kind}", f"COMPLIANCE_SECRET_KEY_PREVIOUS {problem.reason}."
        )
    else:
        yield Finding(
            Severity.warning,
            "secret_rotation_in_progress",
            "COMPLIANCE_SECRET_KEY_PREVIOUS is set: unset it once the rotation's grace period is over.",
        )


def _signing_keys(settings: Settings, _: int) -> Iterator[Finding]:
    """Production never generates passport signing keys (embedded mode does): without them the API cannot start, and
    without the newest one's PDF signing certificate (keys made before dossier PDFs were signed) no PDF is signed."""
    if not settings.is_production:
        return
    root = settings.resolved_signing_keys_dir
    keys = SigningKeys(root, generate=False)
    for environment in Environment:
        try:
            keys.keys(environment)
            keys.pdf_signer(environment)
        except NoPdfSigner as missing:
            yield Finding(
                Severity.unsafe, "dossier_signing_certificate_missing", f"{missing} (dossier PDFs are signed with it)."
            )
        except NoSigningKey:
            yield Finding(
                Severity.unsafe,
                "signing_keys_missing",
                f"no {environment.value} passport signing key under {root} (COMPLIANCE_SIGNING_KEYS_DIR): "
                f"create one with `compliance-api keys rotate --env {environment.value}`.",
            )
        except Exception as exc:  # whatever stops the API loading them: unreadable, not JSON, not a JWK
            yield Finding(
                Severity.unsafe,
                "signing_keys_unreadable",
                f"the {environment.value} passport signing keys under {root} cannot be loaded: {exc}",
            )


def _unknown_settings(_settings: Settings, _: int) -> Iterator[Finding]:
    for name, likely in unknown_settings_in_environment():
        hint = f" (did you mean {likely}?)" if likely else ""
        yield Finding(
            Severity.warning,
            "unknown_setting",
            f"{name} is set but no setting has that name, so it is ignored{hint}.",
        )


def _database(settings: Settings, workers: int) -> Iterator[Finding]:
    if not settings.is_sqlite:
        return
    if workers > 1:
        yield Finding(
            Severity.unsafe,
            "sqlite_several_workers",
            f"SQLite with {workers} workers: writers lock each other out; use PostgreSQL (DATABASE_URL).",
        )
    elif settings.is_production:
        yield Finding(
            Severity.warning, "sqlite_in_production", "SQLite: one machine, one worker, backups are up to you."
        )


def _redis(settings: Settings, workers: int) -> Iterator[Finding]:
    if settings.redis_url:
        return
    if workers > 1:
        yield Finding(
            Severity.unsafe,
            "no_redis_several_workers",
            f"{workers} workers without REDIS_URL: each worker would keep its own rate limits.",
        )
    elif settings.is_production:
        yield Finding(Severity.warning, "no_redis", "No REDIS_URL: rate limits hold for this one process only.")


def _network(settings: Settings, _: int) -> Iterator[Finding]:
    if "*" in settings.cors_allow_origins:
        yield Finding(
            Severity.warning,
            "cors_any_origin",
            "COMPLIANCE_CORS_ALLOW_ORIGINS allows every origin: any web page can call the API with a token it has.",
        )
    if "*" in settings.forwarded_allow_ips.split(","):
        yield Finding(
            Severity.warning,
            "forwarded_from_anyone",
            "COMPLIANCE_FORWARDED_ALLOW_IPS is `*`: any client can claim https and another address through "
            "X-Forwarded-* unless a proxy in front overwrites those headers.",
        )
    if settings.hsts_max_age_seconds == 0:
        yield Finding(Severity.warning, "hsts_disabled", "COMPLIANCE_HSTS_MAX_AGE_SECONDS is 0: no HSTS over https.")
    if settings.is_production and not settings.public_base_url.startswith("https://"):
        yield Finding(
            Severity.warning,
            "public_url_not_https",
            f"COMPLIANCE_PUBLIC_BASE_URL is {settings.public_base_url!r}: clients are sent to plain http links."
            if settings.public_base_url
            else "COMPLIANCE_PUBLIC_BASE_URL is unset: links follow the address each request reached, which behind "
            "a proxy is the proxy's plain-http side.",
        )
    if settings.is_production and settings.metrics_enabled:
        yield Finding(
            Severity.warning,
            "metrics_public",
            "/metrics answers without a token: restrict it at the proxy or set COMPLIANCE_METRICS_ENABLED=false.",
        )


def _webhooks(settings: Settings, _: int) -> Iterator[Finding]:
    if settings.is_production and settings.webhooks_allow_private_targets:
        yield Finding(
            Severity.unsafe,
            "webhooks_private_targets",
            "COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS is on in production: anyone with a sandbox token could make "
            "this server POST to loopback, private and link-local addresses inside your network.",
        )
    if settings.is_production and settings.webhooks_embedded_worker:
        yield Finding(
            Severity.warning,
            "webhooks_embedded_worker",
            "COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER is on: every API process also delivers webhooks and runs the daily "
            "purges; run `compliance-api worker` instead and turn it off.",
        )


def _mail(settings: Settings, _: int) -> Iterator[Finding]:
    if settings.is_production and not settings.smtp_url.get_secret_value():
        yield Finding(
            Severity.warning,
            "smtp_missing",
            "COMPLIANCE_SMTP_URL is not set: dashboard password-reset links are not sent (and never logged in "
            "production); give users `compliance-api users reset-link EMAIL` instead.",
        )


def _passwords(settings: Settings, _: int) -> Iterator[Finding]:
    if settings.password_hash_profile is PasswordHashProfile.cheapest:
        yield Finding(
            Severity.unsafe,
            "password_hash_for_tests",
            "COMPLIANCE_PASSWORD_HASH_PROFILE is `cheapest`: dashboard passwords are hashed with 8 KiB and one pass, "
            "which an offline guesser breaks at full speed; it exists for test runs only.",
        )


CHECKS: tuple[Check, ...] = (
    _secret,
    _previous_secret,
    _signing_keys,
    _database,
    _redis,
    _network,
    _webhooks,
    _mail,
    _passwords,
    _unknown_settings,
)


async def database_findings(settings: Settings) -> list[Finding]:
    """What a production database holds that it must not: the demo's accounts (read by `check` only: the commands
    that start work do not wait for the database to judge their settings)."""
    if not settings.is_production:
        return []
    engine = create_engine(settings.resolved_database_url)
    try:
        async with create_sessionmaker(engine)() as session:
            accounts = await demo_accounts(session)
    except (SQLAlchemyError, OSError) as exc:
        reason = f"{type(exc).__name__}: run `check` where DATABASE_URL is reachable and migrated"
        return [
            Finding(Severity.warning, "database_unread", f"the database was not read for demo accounts ({reason}).")
        ]
    finally:
        await engine.dispose()
    if not accounts:
        return []
    listed = ", ".join(f"{user.email} ({user.kind.value}, {user.plan.value} plan)" for user in accounts)
    return [
        Finding(
            Severity.unsafe,
            "demo_accounts",
            f"the production database holds the accounts `compliance-api demo` makes: {listed}; their tokens are "
            "derived from the server secret and were printed where demo ran: revoke them "
            "(`compliance-api tokens list EMAIL`, `tokens revoke ID`).",
        )
    ]


def findings(settings: Settings, *, workers: int = 1) -> list[Finding]:
    """Every finding about `settings` when served with `workers` processes, the unsafe ones first."""
    found = [finding for check in CHECKS for finding in check(settings, workers)]
    return sorted(found, key=lambda f: f.severity is not Severity.unsafe)


def unsafe(found: list[Finding]) -> list[Finding]:
    return [finding for finding in found if finding.severity is Severity.unsafe]
