"""Authorization state: pending login transactions, authorization codes, browser sessions and
refresh-token families (rotation with reuse detection, as Auth0's refresh token rotation does).

Refresh tokens are stored only as SHA-256 hashes; a family is every token rotated from one sign-in, and
reusing any already-used token revokes the whole family, as Auth0 does with a zero reuse interval.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from tenant_events.simulator.storage import SimStore

TXN_TTL = 600  # seconds a login page stays usable


@dataclass
class AuthRequest:
    client_id: str
    redirect_uri: str
    state: str | None
    nonce: str | None
    scope: list[str]
    audience: str | None
    code_challenge: str
    response_mode: str
    created: float = field(default_factory=time.time)


@dataclass
class Grant:
    """What a code or refresh token stands for."""

    client_id: str
    sub: str
    scope: list[str]
    audience: str | None
    auth_time: int
    nonce: str | None = None


@dataclass
class CodeRecord:
    grant: Grant
    redirect_uri: str
    code_challenge: str
    expires: float
    used: bool = False
    family: str | None = None  # refresh family issued from this code (revoked if the code is replayed)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class AuthStore:
    def __init__(self, store: SimStore) -> None:
        self.store = store
        self.txns: dict[str, AuthRequest] = {}
        self.codes: dict[str, CodeRecord] = {}
        self.sessions: dict[str, int] = {}  # session cookie → auth_time
        # What refresh requests met (GET /_sim/stats "refresh"): rotated, unknown (a token this tenant never
        # issued), reused (a spent token: its family revoked), refused (revoked family, other client)
        self.refresh_outcomes: dict[str, int] = {"rotated": 0, "unknown": 0, "reused": 0, "refused": 0}

    def new_txn(self, request: AuthRequest) -> str:
        now = time.time()
        for key in [k for k, v in self.txns.items() if now - v.created > TXN_TTL]:
            del self.txns[key]
        txn = secrets.token_urlsafe(24)
        self.txns[txn] = request
        return txn

    def new_code(self, record: CodeRecord) -> str:
        code = secrets.token_urlsafe(32)
        self.codes[code] = record
        return code

    # -- refresh tokens
    def issue_refresh(self, grant: Grant, family: str | None = None) -> tuple[str, str]:
        """A new refresh token (and its family id)."""
        token = "v1." + secrets.token_urlsafe(48)
        family = family or secrets.token_hex(12)
        self.store.save_refresh(sha256(token), family, "active", json.dumps(asdict(grant)))
        return token, family

    def use_refresh(self, token: str, client_id: str) -> tuple[Grant, str] | str:
        """Rotate: the token's grant and family, or an error description; reuse revokes the family."""
        row = self.store.load_refresh(sha256(token))
        if row is None:
            self.refresh_outcomes["unknown"] += 1
            return "Unknown or invalid refresh token."
        family, state, grant_json = row
        grant = Grant(**json.loads(grant_json))
        if grant.client_id != client_id:
            self.refresh_outcomes["refused"] += 1
            return "Unknown or invalid refresh token."
        if state == "used":  # reuse detection: a stolen or replayed token kills every token of the family
            self.refresh_outcomes["reused"] += 1
            self.store.set_family_state(family, "revoked")
            return "Unknown or invalid refresh token."
        if state != "active":
            self.refresh_outcomes["refused"] += 1
            return "Unknown or invalid refresh token."
        self.refresh_outcomes["rotated"] += 1
        self.store.save_refresh(sha256(token), family, "used", grant_json)
        return grant, family

    def revoke(self, token: str, client_id: str) -> bool:
        row = self.store.load_refresh(sha256(token))
        if row is None:
            return False
        family, _state, grant_json = row
        if json.loads(grant_json).get("client_id") != client_id:
            return False
        self.store.set_family_state(family, "revoked")
        return True

    def revoke_family(self, family: str) -> None:
        self.store.set_family_state(family, "revoked")


def grant_from(data: dict[str, Any]) -> Grant:
    return Grant(**data)
