"""Errors of the accounts domain, raised by services and shown by the CLI."""


class AccountError(Exception):
    """A user-facing failure with a clear message."""


class UserNotFound(AccountError):
    def __init__(self, email: str) -> None:
        super().__init__(f"no user with e-mail {email!r}")


class UserExists(AccountError):
    def __init__(self, email: str) -> None:
        super().__init__(f"a user with e-mail {email!r} already exists")


class InvalidEmail(AccountError):
    def __init__(self, email: str, reason: str) -> None:
        super().__init__(f"invalid e-mail {email!r}: {reason}")
