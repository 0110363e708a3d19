"""ID token validation (OIDC Core §3.1.3.7) the way Auth0's own SDKs do it.

RS256 only: an HS256 token is `invalid_token`, as the browser library does since v10 (the auth API's versioning notes:
CVE-2026-42280). Then `iss` (exactly the discovery issuer, trailing slash included), `aud` holds our client ID
(and `azp` is ours when there are several audiences), `exp`/`iat` with a leeway (60 s by default, like the node
SDK), `nonce` equals the one we sent, and `auth_time` is recent enough when `max_age` was sent. A claim holding NaN
or Infinity (which JSON does not have, but Python's parser reads) is rejected.
Every failure raises SignInFailed("invalid_token", <which claim and why>).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from joserfc import jws, jwt
from joserfc.errors import JoseError

from tenant_events.auth.discovery import JwksCache
from tenant_events.auth.errors import SignInFailed

ALLOWED_ALG = "RS256"
DEFAULT_LEEWAY = 60


def _invalid(message: str) -> SignInFailed:
    return SignInFailed("invalid_token", f"the ID token was rejected: {message}")


@dataclass(frozen=True)
class IdTokenCheck:
    """What the ID token must match for this sign-in."""

    issuer: str
    client_id: str
    nonce: str | None
    max_age: int | None = None
    leeway: int = DEFAULT_LEEWAY
    clock: Callable[[], float] = time.time


def peek_header(token: str) -> dict[str, Any]:
    """The JOSE header, read without verifying (to pick the algorithm and key)."""
    try:
        return dict(jws.extract_compact(token.encode("ascii")).protected)
    except (JoseError, ValueError, UnicodeError) as exc:
        raise _invalid(f"it is not a compact JWS ({exc.__class__.__name__})") from exc


def _number(claims: dict[str, Any], name: str) -> float:
    value = claims.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _invalid(f"claim {name!r} is missing or not a finite number")
    return float(value)


def _has_non_finite(value: object, depth: int = 0) -> bool:
    """NaN or ±Infinity anywhere in a claim: JSON has no such numbers, and every comparison with NaN is False
    (an `exp` of NaN would never expire)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if depth > 32:
        return True  # nothing a tenant signs nests this deep
    if isinstance(value, dict):
        return any(_has_non_finite(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v, depth + 1) for v in value)
    return False


def check_claims(claims: dict[str, Any], check: IdTokenCheck) -> None:
    """The claim checks of OIDC Core §3.1.3.7 steps 2–4 and 9–11."""
    now = check.clock()
    for name, value in claims.items():
        if _has_non_finite(value):
            raise _invalid(f"claim {name!r} holds a number that is not finite (NaN or Infinity)")
    if claims.get("iss") != check.issuer:
        raise _invalid(f"issuer {claims.get('iss')!r} is not the tenant's issuer {check.issuer!r}")
    aud = claims.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    if check.client_id not in audiences:
        raise _invalid(f"audience {aud!r} does not include this app's client ID {check.client_id!r}")
    azp = claims.get("azp")
    if (len(audiences) > 1 or azp is not None) and azp != check.client_id:
        raise _invalid(f"authorized party (azp) {azp!r} is not this app's client ID {check.client_id!r}")
    exp = _number(claims, "exp")
    if now > exp + check.leeway:
        raise _invalid(f"it expired {int(now - exp)} s ago (leeway {check.leeway} s)")
    iat = _number(claims, "iat")
    if iat > now + check.leeway:
        raise _invalid(f"it was issued {int(iat - now)} s in the future; check the computer's clock")
    if check.nonce is not None and claims.get("nonce") != check.nonce:
        raise _invalid("nonce does not match the one this sign-in sent (a replayed or foreign token)")
    if check.max_age is not None:
        auth_time = _number(claims, "auth_time")
        if now > auth_time + check.max_age + check.leeway:
            raise _invalid(f"auth_time is older than max_age={check.max_age} s")
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        raise _invalid("claim 'sub' is missing")


async def validate_id_token(token: str, keys: JwksCache, check: IdTokenCheck) -> dict[str, Any]:
    """Verify the signature with the tenant's keys, then the claims; return the claims."""
    header = peek_header(token)
    alg = header.get("alg")
    if alg != ALLOWED_ALG:
        # The auth API's errors: HS256 → invalid_token; "none" and everything else too.
        raise _invalid(f"it is signed with {alg!r}; only {ALLOWED_ALG} is accepted")
    key_set = await keys.key_set_for(header.get("kid"))
    try:
        decoded = jwt.decode(token, key_set, algorithms=[ALLOWED_ALG])
    except JoseError as exc:
        raise _invalid(f"bad signature or encoding ({exc.__class__.__name__})") from exc
    claims = dict(decoded.claims)
    check_claims(claims, check)
    return claims
