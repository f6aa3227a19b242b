"""Outgoing mail (password-reset links): SMTP when `COMPLIANCE_SMTP_URL` is set, else the log.

`smtp://user:password@host:587` uses STARTTLS when the server offers it; `smtps://…:465` is TLS from the start.
Without SMTP, embedded mode writes the message to the log so that a local user can follow the link; a production
deployment never logs it (the link signs its holder in), it logs only that nothing was sent.
"""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from email.message import EmailMessage
from typing import Protocol
from urllib.parse import unquote, urlsplit

import structlog

from compliance_api.config import Settings

log = structlog.get_logger()

SMTP_TIMEOUT_SECONDS = 10


class Mailer(Protocol):
    async def send(self, *, to: str, subject: str, body: str) -> None: ...


class LogMailer:
    def __init__(self, *, reveal: bool) -> None:
        self.reveal = reveal

    async def send(self, *, to: str, subject: str, body: str) -> None:
        if self.reveal:
            log.warning("mail_logged_not_sent", to=to, subject=subject, body=body)
        else:
            log.error("mail_not_sent_no_smtp", to=to, subject=subject)


class SmtpMailer:
    def __init__(self, url: str, sender: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in {"smtp", "smtps"} or not parts.hostname:
            raise ValueError("COMPLIANCE_SMTP_URL must look like smtp://user:password@host:587 or smtps://…:465")
        self.implicit_tls = parts.scheme == "smtps"
        self.host = parts.hostname
        self.port = parts.port or (465 if self.implicit_tls else 587)
        self.username = unquote(parts.username or "")
        self.password = unquote(parts.password or "")
        self.sender = sender

    async def send(self, *, to: str, subject: str, body: str) -> None:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = self.sender, to, subject
        message.set_content(body)
        await asyncio.to_thread(self._deliver, message)

    def _deliver(self, message: EmailMessage) -> None:
        context = ssl.create_default_context()
        if self.implicit_tls:
            client: smtplib.SMTP = smtplib.SMTP_SSL(self.host, self.port, timeout=SMTP_TIMEOUT_SECONDS, context=context)
        else:
            client = smtplib.SMTP(self.host, self.port, timeout=SMTP_TIMEOUT_SECONDS)
        with client:
            client.ehlo()
            if not self.implicit_tls and client.has_extn("starttls"):
                client.starttls(context=context)
            if self.username:
                client.login(self.username, self.password)
            client.send_message(message)


def mailer_for(settings: Settings) -> Mailer:
    url = settings.smtp_url.get_secret_value()
    if url:
        return SmtpMailer(url, settings.mail_from)
    return LogMailer(reveal=not settings.is_production)
