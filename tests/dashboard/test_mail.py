"""Reset mail: SMTP when configured, else the log, but never the log in production."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from compliance_api.config import Deployment, Settings
from compliance_api.dashboard.mail import LogMailer, SmtpMailer, mailer_for
from tests.conftest import SECRET

LINK = "http://api.test/freelancer/reset-password/confirm?token=secret-token"


async def test_embedded_mode_logs_the_mail_so_a_local_user_can_follow_the_link() -> None:
    mailer = mailer_for(Settings(secret_key=SECRET))
    assert isinstance(mailer, LogMailer)
    with capture_logs() as logs:
        await mailer.send(to="a@example.com", subject="Set your password", body=f"Open {LINK}")
    assert LINK in str(logs)


async def test_production_never_logs_the_link() -> None:
    mailer = mailer_for(Settings(secret_key=SECRET, deployment=Deployment.production))
    with capture_logs() as logs:
        await mailer.send(to="a@example.com", subject="Set your password", body=f"Open {LINK}")
    assert logs
    assert "secret-token" not in str(logs)


def test_smtp_url_is_read_with_sensible_defaults() -> None:
    mailer = mailer_for(Settings(secret_key=SECRET, smtp_url="smtps://mailer%40corp:p%40ss@mail.example.test"))
    assert isinstance(mailer, SmtpMailer)
    assert (mailer.host, mailer.port, mailer.implicit_tls) == ("mail.example.test", 465, True)
    assert (mailer.username, mailer.password) == ("mailer@corp", "p@ss")
    assert SmtpMailer("smtp://mail.example.test", "x@example.test").port == 587
    with pytest.raises(ValueError, match="COMPLIANCE_SMTP_URL"):
        SmtpMailer("http://mail.example.test", "x@example.test")
