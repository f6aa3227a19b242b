"""Settings: the one place that reads the environment."""

from __future__ import annotations

import contextlib
import difflib
import functools
import math
import os
import secrets
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, NamedTuple

from dotenv import dotenv_values
from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from zxcvbn import zxcvbn  # type: ignore[import-untyped]

from compliance_api.kit.addresses import Bases, request_bases
from compliance_api.kit.registry import Slot, collaborator

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

GUIDE_SITE = Path(__file__).resolve().parent / "guide_site"  # where `make docs` builds the guide
PLACEHOLDER_SECRETS = frozenset({"", "changeme", "changethis", "secret", "dev"})
MIN_SECRET_LENGTH = 32
# A secret's strength is what zxcvbn estimates an attacker must guess: dictionary words (`Password`), keyboard and
# alphabet sequences (`abcdef…`, `0123…`), repeats, dates, then brute force for the rest. Generated secrets score far
# above the bar (32 random hex digits, the smallest common kind, never scored under 91 bits in 1,500 draws;
# `secrets.token_urlsafe(48)` about 210), while `abcdefghijklmnopqrstuvwxyz012345` scores 14 and
# `Password1234567890Password1234567890!` 19.
MIN_SECRET_ESTIMATED_BITS = 80
JUDGED_SECRET_CHARACTERS = 100
"""zxcvbn's time grows fast with the length (a second at 270 characters); the first 100 characters of a generated
secret are already far above the bar, and a longer secret is at least as strong as its start."""
SETTING_PREFIX = "COMPLIANCE_"
MAX_PORT = 65535
ENV_FILE = ".env"  # read by Settings too


class Deployment(StrEnum):
    """`embedded`: one machine, SQLite and in-process helpers; `production`: PostgreSQL, Redis, strict checks."""

    embedded = "embedded"
    production = "production"


class PasswordHashProfile(StrEnum):
    """argon2id parameters for dashboard passwords (argon2-cffi's profiles): RFC 9106's second recommendation (64 MiB,
    3 passes) by default, its first (2 GiB, 1 pass) for hosts with the memory, or argon2-cffi's cheapest, which only
    a test run may use (`compliance-api check` calls it unsafe, and production refuses to start with it)."""

    rfc_9106_low_memory = "rfc_9106_low_memory"
    rfc_9106_high_memory = "rfc_9106_high_memory"
    cheapest = "cheapest"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=ENV_FILE, extra="ignore", populate_by_name=True)

    deployment: Deployment = Field(
        default=Deployment.embedded,
        validation_alias=AliasChoices("COMPLIANCE_DEPLOYMENT"),
    )
    var_dir: Path = Field(default=Path("var"), validation_alias=AliasChoices("COMPLIANCE_VAR_DIR"))
    database_url: str = Field(default="", validation_alias=AliasChoices("DATABASE_URL"))
    redis_url: str = Field(default="", validation_alias=AliasChoices("REDIS_URL"))
    sandbox_hosts: Annotated[tuple[str, ...], NoDecode] = Field(
        default=("sandbox.localhost",),
        validation_alias=AliasChoices("COMPLIANCE_SANDBOX_HOSTS"),
    )
    # A second port `serve` listens on, where every request is the sandbox (clients that cannot choose a Host header
    # reach it by base URL alone). Unset: `serve`'s port + 1 in the embedded deployment, none in production; 0: none.
    sandbox_port: int | None = Field(
        default=None, ge=0, le=MAX_PORT, validation_alias=AliasChoices("COMPLIANCE_SANDBOX_PORT")
    )
    region: str = Field(default="local", validation_alias=AliasChoices("COMPLIANCE_REGION"))
    secret_key: SecretStr = Field(default=SecretStr(""), validation_alias=AliasChoices("COMPLIANCE_SECRET_KEY"))
    secret_key_previous: SecretStr = Field(
        default=SecretStr(""), validation_alias=AliasChoices("COMPLIANCE_SECRET_KEY_PREVIOUS")
    )
    # Unset: links follow the address each request came in on, and `serve`'s address (kit/addresses.py).
    public_base_url: str = Field(default="", validation_alias=AliasChoices("COMPLIANCE_PUBLIC_BASE_URL"))
    metrics_enabled: bool = Field(default=True, validation_alias=AliasChoices("COMPLIANCE_METRICS_ENABLED"))
    max_body_bytes: int = Field(default=1024 * 1024, validation_alias=AliasChoices("COMPLIANCE_MAX_BODY_BYTES"))
    token_cache_ttl_seconds: float = Field(
        default=4.0, gt=0, le=5.0, validation_alias=AliasChoices("COMPLIANCE_TOKEN_CACHE_TTL_SECONDS")
    )
    health_probe_interval_seconds: float = Field(
        default=2.0, gt=0, validation_alias=AliasChoices("COMPLIANCE_HEALTH_PROBE_INTERVAL_SECONDS")
    )
    redis_cool_down_seconds: float = Field(
        default=5.0, gt=0, le=300, validation_alias=AliasChoices("COMPLIANCE_REDIS_COOL_DOWN_SECONDS")
    )
    health_slow_ms: float = Field(default=250.0, gt=0, validation_alias=AliasChoices("COMPLIANCE_HEALTH_SLOW_MS"))
    log_level: str = Field(default="info", validation_alias=AliasChoices("COMPLIANCE_LOG_LEVEL"))
    access_log: bool = Field(default=True, validation_alias=AliasChoices("COMPLIANCE_ACCESS_LOG"))
    classification_retention_years: int = Field(
        default=7, ge=1, le=100, validation_alias=AliasChoices("COMPLIANCE_CLASSIFICATION_RETENTION_YEARS")
    )
    # DAC7 records (activities, reports, seller identities) are kept this many years after the end of the reportable
    # period, then wiped: Directive 2021/514 asks for at least 5 and at most 10 (dac7/retention.py).
    dac7_retention_years: int = Field(
        default=10, ge=5, le=10, validation_alias=AliasChoices("COMPLIANCE_DAC7_RETENTION_YEARS")
    )
    signing_keys_dir: Path | None = Field(default=None, validation_alias=AliasChoices("COMPLIANCE_SIGNING_KEYS_DIR"))
    # Who signs the dossier PDFs: the name in each new PDF signing certificate (made with every passport key).
    operator_name: str = Field(
        default="compliance-api", min_length=1, max_length=64, validation_alias=AliasChoices("COMPLIANCE_OPERATOR_NAME")
    )
    sandbox_retention_days: int = Field(
        default=30, ge=1, le=30, validation_alias=AliasChoices("COMPLIANCE_SANDBOX_RETENTION_DAYS")
    )
    cors_allow_origins: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(), validation_alias=AliasChoices("COMPLIANCE_CORS_ALLOW_ORIGINS")
    )
    forwarded_allow_ips: str = Field(
        default="127.0.0.1", min_length=1, validation_alias=AliasChoices("COMPLIANCE_FORWARDED_ALLOW_IPS")
    )
    hsts_max_age_seconds: int = Field(
        default=31_536_000, ge=0, validation_alias=AliasChoices("COMPLIANCE_HSTS_MAX_AGE_SECONDS")
    )
    request_read_timeout_seconds: float = Field(
        default=30.0, gt=0, le=3600, validation_alias=AliasChoices("COMPLIANCE_REQUEST_READ_TIMEOUT_SECONDS")
    )
    # After a 400, 408 or 431 refusal, `serve` reads and drops what the client still sends for at most this long
    # before closing (server.py).
    refusal_linger_seconds: float = Field(
        default=2.0, gt=0, le=60, validation_alias=AliasChoices("COMPLIANCE_REFUSAL_LINGER_SECONDS")
    )
    keep_alive_timeout_seconds: int = Field(
        default=5, ge=1, le=300, validation_alias=AliasChoices("COMPLIANCE_KEEP_ALIVE_TIMEOUT_SECONDS")
    )
    max_header_bytes: int = Field(
        default=16 * 1024, ge=1024, le=1024 * 1024, validation_alias=AliasChoices("COMPLIANCE_MAX_HEADER_BYTES")
    )
    rates_window_months: int = Field(
        default=24, ge=1, le=240, validation_alias=AliasChoices("COMPLIANCE_RATES_WINDOW_MONTHS")
    )
    rates_min_sample: int = Field(default=10, ge=1, validation_alias=AliasChoices("COMPLIANCE_RATES_MIN_SAMPLE"))
    rates_cache_seconds: float = Field(
        default=4.0, ge=0, le=60, validation_alias=AliasChoices("COMPLIANCE_RATES_CACHE_SECONDS")
    )
    wtta_read_pool_size: int = Field(
        default=5, ge=1, le=100, validation_alias=AliasChoices("COMPLIANCE_WTTA_READ_POOL_SIZE")
    )
    # Each API process keeps the WTTA register in memory (about 100 bytes a row) and answers lookups from it while
    # it is current; false reads the database on every lookup (wtta/replica.py).
    wtta_replica: bool = Field(default=True, validation_alias=AliasChoices("COMPLIANCE_WTTA_REPLICA"))
    # On PostgreSQL each API process keeps the rows the passport routes read in memory, forgotten on every change
    # (LISTEN passport_changed); false reads the database on every call (passport/mirror.py).
    passport_mirror: bool = Field(default=True, validation_alias=AliasChoices("COMPLIANCE_PASSPORT_MIRROR"))
    # Set, the worker keeps the production cache fresh from this URL (wtta/refresh.py); /v1/health then reports
    # `degraded` once the cache is older than twice the interval.
    wtta_register_url: str = Field(default="", validation_alias=AliasChoices("COMPLIANCE_WTTA_REGISTER_URL"))
    wtta_refresh_hours: float = Field(
        default=24.0, gt=0, le=24 * 31, validation_alias=AliasChoices("COMPLIANCE_WTTA_REFRESH_HOURS")
    )
    smtp_url: SecretStr = Field(default=SecretStr(""), validation_alias=AliasChoices("COMPLIANCE_SMTP_URL"))
    mail_from: str = Field(default="compliance-api@localhost", validation_alias=AliasChoices("COMPLIANCE_MAIL_FROM"))
    # Stored hashes carry their parameters: after a change, each password is re-hashed at its next sign-in.
    password_hash_profile: PasswordHashProfile = Field(
        default=PasswordHashProfile.rfc_9106_low_memory,
        validation_alias=AliasChoices("COMPLIANCE_PASSWORD_HASH_PROFILE"),
    )
    dashboard_session_hours: float = Field(
        default=12.0, gt=0, le=720, validation_alias=AliasChoices("COMPLIANCE_DASHBOARD_SESSION_HOURS")
    )
    password_reset_minutes: int = Field(
        default=30, ge=5, le=1440, validation_alias=AliasChoices("COMPLIANCE_PASSWORD_RESET_MINUTES")
    )

    # Unset: only the embedded deployment's sandbox (what `make run` serves) takes private targets, so local webhooks
    # need no restart; `false` refuses them there too; `true` also allows them in the embedded deployment's
    # production and in a production deployment's sandbox (which `check` calls unsafe).
    webhooks_allow_private_targets: bool | None = Field(
        default=None, validation_alias=AliasChoices("COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS")
    )
    webhooks_embedded_worker: bool = Field(
        default=False, validation_alias=AliasChoices("COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER")
    )
    webhooks_poll_seconds: float = Field(
        default=0.25, gt=0, le=60, validation_alias=AliasChoices("COMPLIANCE_WEBHOOKS_POLL_SECONDS")
    )
    webhooks_lease_seconds: float = Field(
        default=60.0, ge=1, le=3600, validation_alias=AliasChoices("COMPLIANCE_WEBHOOKS_LEASE_SECONDS")
    )
    webhooks_concurrency: int = Field(
        default=16, ge=1, le=256, validation_alias=AliasChoices("COMPLIANCE_WEBHOOKS_CONCURRENCY")
    )
    # At most this many attempts to one endpoint at once per worker (and always fewer than the concurrency), so a slow
    # endpoint never holds every sender.
    webhooks_endpoint_concurrency: int = Field(
        default=4, ge=1, le=256, validation_alias=AliasChoices("COMPLIANCE_WEBHOOKS_ENDPOINT_CONCURRENCY")
    )
    webhooks_batch_size: int = Field(
        default=200, ge=1, le=5000, validation_alias=AliasChoices("COMPLIANCE_WEBHOOKS_BATCH_SIZE")
    )
    # The request log (requestlog/buffer.py): requests kept in memory per process before a batch is written (more are
    # dropped and counted), and the longest a request waits in memory.
    request_log_buffer: int = Field(
        default=10_000, ge=100, le=1_000_000, validation_alias=AliasChoices("COMPLIANCE_REQUEST_LOG_BUFFER")
    )
    request_log_flush_seconds: float = Field(
        default=1.0, gt=0, le=3600, validation_alias=AliasChoices("COMPLIANCE_REQUEST_LOG_FLUSH_SECONDS")
    )
    guide_dir: Path = Field(default=GUIDE_SITE, validation_alias=AliasChoices("COMPLIANCE_GUIDE_DIR"))

    @field_validator("wtta_register_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL")
        return value

    @field_validator("sandbox_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(h.strip().lower() for h in value.split(",") if h.strip())
        return value

    @field_validator("cors_allow_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(o.strip().rstrip("/") for o in value.split(",") if o.strip())
        return value

    @property
    def is_production(self) -> bool:
        return self.deployment is Deployment.production

    def sandbox_port_beside(self, port: int) -> int | None:
        """The port `serve` answers the sandbox on next to `port` (0: any free one), or None for no such port."""
        if self.sandbox_port is not None:
            return self.sandbox_port or None
        if self.is_production or port == MAX_PORT:
            return None
        return port + 1 if port else 0

    @property
    def sandbox_listener_port(self) -> int | None:
        """The port whose every request is the sandbox, as `serve` resolved it for its processes (None: none)."""
        return self.sandbox_port or None

    @property
    def resolved_database_url(self) -> str:
        """The SQLAlchemy async URL: SQLite under `var/` when unset; drivers filled in for bare schemes."""
        url = self.database_url or f"sqlite:///{self.var_dir / 'compliance.db'}"
        return to_async_url(url)

    @property
    def is_sqlite(self) -> bool:
        return self.resolved_database_url.startswith("sqlite")

    @property
    def resolved_signing_keys_dir(self) -> Path:
        """Passport signing keys: `COMPLIANCE_SIGNING_KEYS_DIR`, else `var/keys`."""
        return self.signing_keys_dir or self.var_dir / "keys"

    def secret_key_bytes(self) -> bytes:
        """The server-side secret (token pepper); in embedded mode generated once into `var/`."""
        value = self.secret_key.get_secret_value()
        if value:
            return _checked_secret(value, "COMPLIANCE_SECRET_KEY")
        if self.deployment is Deployment.production:
            raise ValueError("COMPLIANCE_SECRET_KEY is required when COMPLIANCE_DEPLOYMENT=production")
        path = self.var_dir / "secret_key"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):  # created owner-only from the start, and only once
                with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
                    file.write(secrets.token_urlsafe(48))
        return path.read_text().strip().encode()

    def previous_secret_key_bytes(self) -> bytes | None:
        """The secret being retired during a rotation (`COMPLIANCE_SECRET_KEY_PREVIOUS`), None when unset."""
        value = self.secret_key_previous.get_secret_value()
        return _checked_secret(value, "COMPLIANCE_SECRET_KEY_PREVIOUS") if value else None

    def secret_keys(self) -> tuple[bytes, ...]:
        """Every secret to try when opening something keyed with the server secret: the current one first."""
        previous = self.previous_secret_key_bytes()
        return (self.secret_key_bytes(),) if previous is None else (self.secret_key_bytes(), previous)


@functools.lru_cache(maxsize=8)  # judged at every start and by every command that opens the database
def estimated_entropy_bits(value: str) -> float:
    """log2 of the guesses zxcvbn estimates for the secret's first characters."""
    judged = value[:JUDGED_SECRET_CHARACTERS]
    guesses_log10: float = zxcvbn(judged, max_length=len(judged))["guesses_log10"]
    return guesses_log10 * math.log2(10)


class SecretProblem(NamedTuple):
    kind: Literal["placeholder", "low_entropy"]
    reason: str


def secret_problem(value: str) -> SecretProblem | None:
    """Why `value` cannot be a server secret (refused at start and by `compliance-api check`), or None."""
    if value.lower() in PLACEHOLDER_SECRETS:
        return SecretProblem("placeholder", "is a placeholder")
    if len(value) < MIN_SECRET_LENGTH:
        return SecretProblem("placeholder", f"is shorter than {MIN_SECRET_LENGTH} characters")
    bits = estimated_entropy_bits(value)
    if bits < MIN_SECRET_ESTIMATED_BITS:
        return SecretProblem(
            "low_entropy",
            f"is guessable (about {bits:.0f} bits of guessing estimated by zxcvbn, at least "
            f"{MIN_SECRET_ESTIMATED_BITS} needed: words, sequences and repeats count for little): generate it, e.g. "
            "with secrets.token_urlsafe(48)",
        )
    return None


def _checked_secret(value: str, name: str) -> bytes:
    problem = secret_problem(value)
    if problem is not None:
        raise ValueError(f"{name} {problem.reason}")
    return value.encode()


def setting_names() -> frozenset[str]:
    """Every environment variable Settings reads."""
    names: set[str] = set()
    for field in Settings.model_fields.values():
        if isinstance(field.validation_alias, AliasChoices):
            names.update(str(choice) for choice in field.validation_alias.choices)
    return frozenset(names)


def unknown_settings_in_environment() -> list[tuple[str, str | None]]:
    """`unknown_settings` of this process's environment and `.env` file (both of which Settings reads)."""
    return unknown_settings([*os.environ, *dotenv_values(ENV_FILE)])


def unknown_settings(variable_names: Iterable[str]) -> list[tuple[str, str | None]]:
    """The `COMPLIANCE_*` names (in any case, as Settings reads them) that no setting reads, each with the setting it
    is closest to, if one is close: a misspelt setting is otherwise silently ignored."""
    known = setting_names()
    unknown = {name for name in variable_names if name.upper().startswith(SETTING_PREFIX) and name.upper() not in known}
    return [
        (name, next(iter(difflib.get_close_matches(name.upper(), known, n=1, cutoff=0.8)), None))
        for name in sorted(unknown)
    ]


def to_async_url(url: str) -> str:
    """Map plain `sqlite://` and `postgresql://` URLs to the async drivers we ship."""
    for plain, driver in (
        ("sqlite://", "sqlite+aiosqlite://"),
        ("postgresql://", "postgresql+asyncpg://"),
        ("postgres://", "postgresql+asyncpg://"),
    ):
        if url.startswith(plain):
            return driver + url[len(plain) :]
    return url


SETTINGS = Slot[Settings]("settings")


def settings_of(connection: HTTPConnection) -> Settings:
    return collaborator(connection, SETTINGS)


def bases_of(connection: HTTPConnection) -> Bases:
    """Where production and the sandbox are reached, seen from the address this request came in on."""
    settings = settings_of(connection)
    return request_bases(
        connection.scope, settings.public_base_url, settings.sandbox_listener_port, settings.sandbox_hosts
    )
