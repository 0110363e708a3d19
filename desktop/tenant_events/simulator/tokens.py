"""Minting and checking the simulator's JWTs with joserfc.

Access tokens: RS256, `aud` = `{base_url}/` (plus `{auth_url}/userinfo` when `openid` was asked, as Auth0
does), `scope`, `azp`, short lifetime. ID tokens: RS256 with nonce, iss, aud=client_id,
azp, exp, iat, auth_time and profile claims (what Auth0's SDKs validate); the fault knobs can make them
HS256, wrongly issued/addressed or expired for the client's negative tests.
"""

from __future__ import annotations

import math
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from joserfc import errors as jose_errors
from joserfc import jwt
from joserfc.jwk import KeySet, OctKey, RSAKey

from tenant_events.simulator.clients import READ_EVENTS, ClientRegistry
from tenant_events.simulator.keys import public_keyset

DEMO_USER: dict[str, Any] = {
    "sub": "auth0|65f0c0ffee0000000000d3m0",
    "name": "Demo Admin",
    "nickname": "demo-admin",
    "email": "admin@demo-tenant.sim.local",
    "email_verified": True,
    "picture": "https://example.com/avatars/demo-admin.png",
}


class TokenRejected(Exception):
    """The bearer token cannot be used; `status` and `message` are the HTTP error to send (docs/event-stream.md "Errors")."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class IdTokenFaults:
    """Knobs for the sign-in engineer's negative tests (set through /_sim/faults)."""

    alg: str = "RS256"
    issuer: str | None = None
    audience: str | None = None
    expired: bool = False
    nonce: str | None = None
    exp: str | None = None  # "nan", "inf", "-inf" or a number: the `exp` claim as given (a non-finite one is
    # what a broken or hostile tenant might sign; JSON carries it as NaN/Infinity)


class TokenService:
    def __init__(self, key: RSAKey, issuer: str, audience: str, clients: ClientRegistry) -> None:
        self.key = key
        self.keyset: KeySet = public_keyset(key)
        self.issuer = issuer  # "{auth_url}/"
        self.audience = audience  # "{base_url}/"
        self.userinfo_audience = issuer + "userinfo"
        self.clients = clients
        self.id_faults = IdTokenFaults()

    def _sign(self, claims: dict[str, Any]) -> str:
        return jwt.encode({"alg": "RS256", "typ": "JWT", "kid": self.key.kid}, claims, self.key)

    def mint_access(
        self,
        *,
        client_id: str,
        sub: str,
        scope: str,
        ttl: int,
        openid: bool = False,
        grant_type: str | None = None,
        audience: str | None = None,
    ) -> str:
        """An RS256 access token; `audience` replaces the events API audience (`{base_url}/`)."""
        now = int(time.time())
        aud: str | list[str] = [self.audience, self.userinfo_audience] if openid else self.audience
        if audience is not None:
            aud = audience
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": sub,
            "aud": aud,
            "iat": now,
            "exp": now + ttl,
            "azp": client_id,
            "scope": scope,
            "jti": secrets.token_hex(8),
        }
        if grant_type == "client_credentials":
            claims["gty"] = "client-credentials"
        return self._sign(claims)

    def mint_id_token(self, *, client_id: str, nonce: str | None, auth_time: int, ttl: int = 36000) -> str:
        f, now = self.id_faults, int(time.time())
        claims: dict[str, Any] = {
            **DEMO_USER,
            "iss": f.issuer or self.issuer,
            "aud": f.audience or client_id,
            "azp": client_id,
            "iat": now,
            "exp": now + ttl,
            "auth_time": auth_time,
            "updated_at": datetime.fromtimestamp(now, UTC).isoformat().replace("+00:00", "Z"),
        }
        if f.expired:
            claims.update(iat=now - 7200, exp=now - 3600)
        if f.exp is not None:
            claims["exp"] = float(f.exp)
        if nonce is not None or f.nonce is not None:
            claims["nonce"] = f.nonce if f.nonce is not None else nonce
        if f.alg == "HS256":  # the negative case clients must reject
            return jwt.encode({"alg": "HS256", "typ": "JWT"}, claims, OctKey.import_key(b"s" * 32))
        return self._sign(claims)

    def decode(self, token: str) -> dict[str, Any]:
        """Signature-checked claims; TokenRejected(401) with the service's messages otherwise (docs/event-stream.md "Errors")."""
        try:
            decoded = jwt.decode(token, self.keyset, algorithms=["RS256"])
        except (
            jose_errors.BadSignatureError,
            jose_errors.InvalidKeyIdError,
            jose_errors.MissingKeyError,
        ) as exc:
            # A wrong signature, or one made with a key this tenant never published.
            raise TokenRejected(401, "Invalid signature received for JSON Web Token validation.") from exc
        except (jose_errors.JoseError, ValueError, TypeError) as exc:
            raise TokenRejected(
                401, f"Invalid token. The bearer token is not a usable JWT ({type(exc).__name__})."
            ) from exc
        return dict(decoded.claims)

    def check_events_access(self, token: str) -> dict[str, Any]:
        """What the stream accepts: valid JWT (signature, expiry, audience), global client, read:events."""
        claims = self.decode(token)
        now = time.time()
        exp = claims.get("exp")
        if not isinstance(exp, int | float) or not math.isfinite(exp) or exp <= now:
            raise TokenRejected(401, "Invalid token. The access token has expired.")
        if claims.get("iss") != self.issuer:
            raise TokenRejected(401, f"Invalid token. Unexpected issuer {claims.get('iss')!r}.")
        aud = claims.get("aud")
        auds = aud if isinstance(aud, list) else [aud]
        if self.audience not in auds:
            raise TokenRejected(401, f"Invalid token. Audience {aud!r} does not include {self.audience!r}.")
        client = self.clients.get(str(claims.get("azp") or ""))
        if client is None or not client.is_global:
            raise TokenRejected(401, "Client is not global.")
        if READ_EVENTS not in str(claims.get("scope", "")).split():
            raise TokenRejected(403, f"Insufficient scope; expected any of: {READ_EVENTS}.")
        return claims
