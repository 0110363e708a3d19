"""PKCE (RFC 7636) verifier/challenge pairs and the random `state` and `nonce` of one authorization request.

S256 only: Auth0 supports nothing else and `plain` would defeat the point (RFC 7636 §4.2).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def challenge_for(verifier: str) -> str:
    """BASE64URL(SHA256(ASCII(code_verifier))), no padding (RFC 7636 §4.2)."""
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def new_verifier() -> str:
    """43–128 chars of [A-Za-z0-9-._~] (RFC 7636 §4.1); 64 random bytes give 86 chars."""
    return _b64url(secrets.token_bytes(64))


def random_token() -> str:
    """An unguessable value for `state` and `nonce` (RFC 6749 §10.12, OIDC Core §15.5.2)."""
    return _b64url(secrets.token_bytes(32))


@dataclass(frozen=True)
class AuthRequestSecrets:
    """The per-attempt secrets; the verifier is bound to its `state` by living in the same object."""

    state: str = field(default_factory=random_token)
    nonce: str = field(default_factory=random_token)
    code_verifier: str = field(default_factory=new_verifier, repr=False)

    @property
    def code_challenge(self) -> str:
        return challenge_for(self.code_verifier)

    def __repr__(self) -> str:  # keep all three out of logs
        return "AuthRequestSecrets(<hidden>)"
