"""`users set-password` and `users reset-link`: how a user made by the CLI gets a dashboard password."""

from __future__ import annotations

import asyncio

from typer.testing import CliRunner

from compliance_api.cli import app as cli
from compliance_api.config import PasswordHashProfile, Settings
from compliance_api.dashboard import passwords
from compliance_api.dashboard import service as dashboard_service
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.kit.clock import utcnow
from tests.conftest import SECRET


def _cli(env: dict[str, str], *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env, input=stdin)
    return result.exit_code, result.stdout, result.stderr


def _signs_in(env: dict[str, str], email: str, password: str) -> bool:
    async def attempt() -> bool:
        engine = create_engine(Settings(database_url=env["DATABASE_URL"]).resolved_database_url)
        try:
            async with create_sessionmaker(engine).begin() as session:
                user = await dashboard_service.authenticate(
                    session,
                    email=email,
                    password=password,
                    hasher=passwords.hasher_for(PasswordHashProfile(env["COMPLIANCE_PASSWORD_HASH_PROFILE"])),
                    now=utcnow(),
                )
        finally:
            await engine.dispose()
        return user is not None

    return asyncio.run(attempt())


def _reset_usable(env: dict[str, str], token: str) -> bool:
    async def check() -> bool:
        engine = create_engine(Settings(database_url=env["DATABASE_URL"]).resolved_database_url)
        try:
            async with create_sessionmaker(engine)() as session:
                return await dashboard_service.reset_is_usable(
                    session, token=token, pepper=SECRET.encode(), now=utcnow()
                )
        finally:
            await engine.dispose()

    return asyncio.run(check())


def test_a_cli_user_gets_a_password_from_set_password(cli_env: dict[str, str]) -> None:
    assert _cli(cli_env, "users", "create", "ops@example.com")[0] == 0
    assert not _signs_in(cli_env, "ops@example.com", "a long passphrase")
    code, _, err = _cli(
        cli_env, "users", "set-password", "ops@example.com", stdin="a long passphrase\na long passphrase\n"
    )
    assert code == 0, err
    assert "password set for ops@example.com" in err
    assert _signs_in(cli_env, "ops@example.com", "a long passphrase")
    code, _, err = _cli(cli_env, "users", "set-password", "ops@example.com", "--password-stdin", stdin="short\n")
    assert code == 1
    assert "at least 10 characters" in err
    assert _signs_in(cli_env, "ops@example.com", "a long passphrase")


def test_reset_link_prints_a_single_use_link(cli_env: dict[str, str]) -> None:
    assert _cli(cli_env, "users", "create", "ops@example.com")[0] == 0
    env = {**cli_env, "COMPLIANCE_PUBLIC_BASE_URL": "http://api.test"}
    code, out, _ = _cli(env, "users", "reset-link", "ops@example.com")
    assert code == 0
    assert out.startswith("http://api.test/freelancer/reset-password/confirm?token=")
    assert _reset_usable(cli_env, out.strip().split("token=")[1])
    code, _, err = _cli(cli_env, "users", "reset-link", "nobody@example.com")
    assert code == 1
    assert "no user" in err
