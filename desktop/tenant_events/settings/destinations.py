"""Alert destinations as the settings file keeps them: a name, the URL with its secrets masked, and a filter.

The whole URL (tokens, passwords, webhook keys) lives only in the keyring, in a slot of this data dir
(destinations/registry.py); the file holds the masked form Apprise prints (`json://127.0.0.1:8080/...`,
`slack://T1/B***/X***`), enough to recognise it, never enough to use it, and a random id of the URL.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Severity = Literal["info", "warning", "critical"]
SEVERITIES: Final[tuple[Severity, ...]] = ("info", "warning", "critical")
_DEFAULT_SEVERITIES: Final[tuple[Severity, ...]] = ("warning", "critical")
_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_destination_name(name: str) -> str:
    """`name` if usable (it is a keyring slot and a command-line word); ValueError saying what is allowed."""
    if not _NAME.match(name):
        raise ValueError(
            f"{name!r} is not a destination name (1–64 letters, digits, '-', '_' or '.', starting with a letter or digit)"
        )
    return name


# Pagers and machine receivers close their incident on a resolve; e-mail and chat would only grow noisier.
RESOLVED_BY_DEFAULT: Final = frozenset(
    {
        "pagerduty",
        "opsgenie",
        "json",
        "jsons",
        "form",
        "forms",
        "xml",
        "xmls",
        "pagertree",
        "splunk",
        "victorops",
    }
)


def resolved_by_default(url: str) -> bool:
    """Whether a destination of this URL's kind (its scheme) is told of resolves unless set otherwise."""
    return url.partition("://")[0].lower() in RESOLVED_BY_DEFAULT


class DestinationProfile(BaseModel):
    """Where alerts go and which: empty `rules`/`tenants` mean all of them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    url_masked: str = Field(
        description="the Apprise URL with its secret parts masked; the URL is in the keyring"
    )
    fingerprint: str = Field(
        "",
        description="a random id given to each URL saved (nothing derived from it): a new URL lifts a stop",
    )
    severities: list[Severity] = Field(default_factory=lambda: list(_DEFAULT_SEVERITIES))
    rules: list[str] = Field(default_factory=list, description="rule ids; empty: every rule")
    tenants: list[str] = Field(default_factory=list, description="tenant profiles; empty: every tenant")
    held_by_quiet: bool = Field(True, description="quiet hours and do-not-disturb hold deliveries back")
    send_resolved: bool | None = Field(
        None,
        description="also say when an alert is resolved; None: as its kind does (pagers and webhooks yes, "
        "e-mail and chat no)",
    )
    repeat_minutes: float = Field(
        60.0,
        ge=0,
        le=10_080,
        description="a critical alert nobody acknowledged is sent again this often; 0 = never",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_destination_name(value)

    @field_validator("severities")
    @classmethod
    def _severities(cls, value: list[Severity]) -> list[Severity]:
        if not value:
            raise ValueError("pick at least one severity (info, warning, critical)")
        return [s for s in SEVERITIES if s in value]

    @property
    def sends_resolved(self) -> bool:
        """Whether resolves are sent here (`send_resolved`, else as its kind does, as Alertmanager's receivers)."""
        if self.send_resolved is not None:
            return self.send_resolved
        return resolved_by_default(self.url_masked)

    def receives(self, severity: str, rule_id: str, tenant: str) -> bool:
        """Whether an alert of this severity, rule and tenant goes here."""
        return (
            severity in self.severities
            and (not self.rules or rule_id in self.rules)
            and (not self.tenants or tenant in self.tenants)
        )
