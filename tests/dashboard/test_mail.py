"""Reset mail: SMTP when configured (a real local SMTP server here), else the log, but never the log in production."""

from __future__ import annotations

import email
from collections.abc import Iterator
from email.message import Message
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword

from compliance_api.config import Deployment, Settings
from compliance_api.dashboard.mail import LogMailer, SmtpMailer, mailer_for
from compliance_api.logging import configure_logging
from tests.conftest import SECRET
from tests.servers import free_port

LINK = "http://api.test/freelancer/reset-password/confirm?token=secret-token"


class Inbox:
    """An aiosmtpd handler keeping every message it is given."""

    def __init__(self) -> None:
        self.messages: list[tuple[Envelope, Message]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Envelope) -> str:
        content = envelope.content if isinstance(envelope.content, bytes) else str(envelope.content).encode()
        self.messages.append((envelope, email.message_from_bytes(content)))
        return "250 OK"


def _only_mailer(_server: Any, _session: Any, _envelope: Any, mechanism: str, data: Any) -> AuthResult:
    ok = isinstance(data, LoginPassword) and (data.login, data.password) == (b"mailer@corp", b"p@ss")
    return AuthResult(success=ok)


@pytest.fixture
def smtp_server() -> Iterator[tuple[int, Inbox]]:
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port, authenticator=_only_mailer, auth_require_tls=False)
    controller.start()
    try:
        yield port, inbox
    finally:
        controller.stop()


async def test_smtp_delivers_the_mail(smtp_server: tuple[int, Inbox]) -> None:
    port, inbox = smtp_server
    settings = Settings(
        secret_key=SECRET, smtp_url=f"smtp://mailer%40corp:p%40ss@127.0.0.1:{port}", mail_from="no-reply@api.test"
    )
    mailer = mailer_for(settings)
    assert isinstance(mailer, SmtpMailer)
    await mailer.send(to="anna@example.com", subject="Set your password", body=f"Open {LINK}\n")
    [(envelope, message)] = inbox.messages
    assert envelope.mail_from == "no-reply@api.test"
    assert envelope.rcpt_tos == ["anna@example.com"]
    assert message["Subject"] == "Set your password"
    assert LINK in str(message.get_payload())


async def test_embedded_mode_logs_the_mail_so_a_local_user_can_follow_the_link(
    capfd: pytest.CaptureFixture[str],
) -> None:
    configure_logging()
    mailer = mailer_for(Settings(secret_key=SECRET))
    assert isinstance(mailer, LogMailer)
    await mailer.send(to="a@example.com", subject="Set your password", body=f"Open {LINK}")
    assert LINK in capfd.readouterr().out


async def test_production_never_logs_the_link(capfd: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    mailer = mailer_for(Settings(secret_key=SECRET, deployment=Deployment.production))
    await mailer.send(to="a@example.com", subject="Set your password", body=f"Open {LINK}")
    logged = capfd.readouterr().out
    assert "mail_not_sent_no_smtp" in logged
    assert "secret-token" not in logged


def test_smtp_url_is_read_with_sensible_defaults() -> None:
    mailer = mailer_for(Settings(secret_key=SECRET, smtp_url="smtps://mailer%40corp:p%40ss@mail.example.test"))
    assert isinstance(mailer, SmtpMailer)
    assert (mailer.host, mailer.port, mailer.implicit_tls) == ("mail.example.test", 465, True)
    assert (mailer.username, mailer.password) == ("mailer@corp", "p@ss")
    assert SmtpMailer("smtp://mail.example.test", "x@example.test").port == 587
    with pytest.raises(ValueError, match="COMPLIANCE_SMTP_URL"):
        SmtpMailer("http://mail.example.test", "x@example.test")
