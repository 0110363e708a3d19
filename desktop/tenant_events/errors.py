"""Errors the user can fix, split from bugs.

TenantEventsError            anything this app raises on purpose
 ├── UserFixableError        has `hint`: the next step for the user (shown in UI, one line in the CLI)
 │    ├── ConfigError        a setting or profile field is wrong (names the field)
 │    ├── SignInRequired     no usable sign-in: sign in again
 │    ├── SignInBusy         another process is refreshing the sign-in: wait (followers retry), not signed out
 │    ├── StorageError       disk full, read-only, locked, corrupt database
 │    └── NetworkError       offline, DNS, TLS
 └── (anything else)         a bug: full traceback in the log, details dialog in the UI
"""

from __future__ import annotations


class TenantEventsError(Exception):
    """Base of every error this app raises on purpose."""


class UserFixableError(TenantEventsError):
    """Something the user can fix; `hint` says how."""

    exit_code = 2

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} — {self.hint}" if self.hint else self.message


class ConfigError(UserFixableError):
    """A setting or tenant profile field has a bad value; the message names the field."""

    exit_code = 3

    def __init__(self, field: str, message: str, hint: str = "") -> None:
        super().__init__(f"{field}: {message}", hint)
        self.field = field


class SignInRequired(UserFixableError):
    """No usable sign-in for this tenant."""

    exit_code = 4


class SignInBusy(UserFixableError):
    """Another process sharing the sign-in has held its refresh lock longer than one wait (a token request that
    hangs there). Nothing is wrong with the sign-in: a follower keeps retrying and re-reads the token that
    process stores; a one-shot command stops with this line."""

    def __init__(self, tenant: str, waited: float) -> None:
        super().__init__(
            f"another Tenant Events process has been refreshing the sign-in of {tenant} for over {waited:g} s",
            "try again when it is done, or stop that process if it hangs",
        )
        self.tenant = tenant
        self.waiting = waiting_for_sign_in(tenant)


def waiting_for_sign_in(tenant: str) -> str:
    """What a follower says while another process refreshes the sign-in it needs."""
    return f"waiting for another Tenant Events process that is refreshing the sign-in of {tenant}"


class StorageError(UserFixableError):
    """The local database cannot be written or read."""

    exit_code = 5
    expected = False  # a refusal that is part of normal operation (logged as news, not as an error)


class NetworkError(UserFixableError):
    """The tenant cannot be reached."""

    exit_code = 6
