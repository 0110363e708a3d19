"""ID token checks with locally signed tokens: every rejection names the claim; RS256 only; JWKS refetched
once on an unknown kid. (The same checks run against real OP tokens in test_e2e_oidc_peer.py.)"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey

from tenant_events.auth.discovery import JwksCache
from tenant_events.auth.errors import SignInFailed
from tenant_events.auth.id_token import IdTokenCheck, validate_id_token

ISS = "https://acme.example/"
CLIENT = "client-1"
KEY_A = RSAKey.generate_key(2048, parameters={"kid": "a"})
KEY_B = RSAKey.generate_key(2048, parameters={"kid": "b"})


class Jwks:
    """A JWKS endpoint whose key list the test rotates; counts fetches."""

    def __init__(self, *keys: RSAKey) -> None:
        self.keys = list(keys)
        self.fetches = 0

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.fetches += 1
        return httpx.Response(200, json={"keys": [k.as_dict(private=False) for k in self.keys]})


def claims(**overrides):
    now = int(time.time())
    base = {"iss": ISS, "aud": CLIENT, "sub": "auth0|1", "iat": now, "exp": now + 600, "nonce": "n1"}
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def sign(body, key=KEY_A, alg="RS256"):
    header = {"alg": alg}
    if isinstance(key, RSAKey):
        header["kid"] = key.kid
    return jwt.encode(header, body, key, algorithms=[alg])


def check(**kw) -> IdTokenCheck:
    return IdTokenCheck(**({"issuer": ISS, "client_id": CLIENT, "nonce": "n1"} | kw))


def validate(token, chk=None, jwks=None):
    jwks = jwks or Jwks(KEY_A)

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(jwks.handler)) as http:
            return await validate_id_token(
                token, JwksCache(http, "https://acme.example/.well-known/jwks.json"), chk or check()
            )

    return asyncio.run(go())


def rejected(token, chk=None, jwks=None) -> str:
    with pytest.raises(SignInFailed) as info:
        validate(token, chk, jwks)
    assert info.value.code == "invalid_token"
    return str(info.value)


def test_a_good_token_passes():
    assert validate(sign(claims()))["sub"] == "auth0|1"


def test_hs256_is_invalid_token_even_with_a_valid_mac():
    token = sign(claims(), OctKey.import_key("a-shared-secret-that-is-long-enough-32b"), "HS256")
    assert "signed with 'HS256'; only RS256 is accepted" in rejected(token)


def test_alg_none_is_rejected():
    import base64
    import json

    def b64(d):
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()

    token = f"{b64({'alg': 'none'})}.{b64(claims())}."
    assert "signed with 'none'" in rejected(token)


def test_forged_signature_is_rejected():
    other = RSAKey.generate_key(2048, parameters={"kid": "a"})  # same kid, different key
    assert "bad signature" in rejected(sign(claims(), other))


@pytest.mark.parametrize(
    ("overrides", "text"),
    [
        ({"iss": "https://acme.example"}, "is not the tenant's issuer 'https://acme.example/'"),
        ({"iss": "https://evil.example/"}, "issuer 'https://evil.example/'"),
        ({"aud": "other-client"}, "audience 'other-client' does not include this app's client ID 'client-1'"),
        ({"aud": [CLIENT, "api"]}, "authorized party (azp) None"),
        ({"aud": [CLIENT, "api"], "azp": "api"}, "authorized party (azp) 'api'"),
        ({"exp": int(time.time()) - 120}, "expired"),
        ({"exp": None}, "claim 'exp' is missing"),
        ({"iat": None}, "claim 'iat' is missing"),
        ({"iat": int(time.time()) + 3600}, "s in the future; check the computer's clock"),
        ({"nonce": "n2"}, "nonce does not match"),
        ({"nonce": None}, "nonce does not match"),
        ({"sub": None}, "claim 'sub' is missing"),
    ],
)
def test_claim_rejections_name_the_claim(overrides, text):
    assert text in rejected(sign(claims(**overrides)))


def test_multiple_audiences_with_our_azp_pass():
    assert validate(sign(claims(aud=[CLIENT, "https://acme.example/userinfo"], azp=CLIENT)))


def test_leeway_is_configurable():
    token = sign(claims(exp=int(time.time()) - 30))
    assert validate(token)  # default 60 s leeway
    assert "expired" in rejected(token, check(leeway=0))


def test_auth_time_is_checked_when_max_age_was_sent():
    old = int(time.time()) - 4000
    assert "auth_time is older than max_age=3600" in rejected(
        sign(claims(auth_time=old)), check(max_age=3600)
    )
    assert "claim 'auth_time' is missing" in rejected(sign(claims()), check(max_age=3600))
    assert validate(sign(claims(auth_time=int(time.time()) - 10)), check(max_age=3600))


def test_unknown_kid_refetches_the_key_set_once():
    jwks = Jwks(KEY_A)

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(jwks.handler)) as http:
            cache = JwksCache(http, "https://acme.example/.well-known/jwks.json")
            await validate_id_token(sign(claims()), cache, check())
            assert jwks.fetches == 1
            await validate_id_token(sign(claims()), cache, check())
            assert jwks.fetches == 1, "cached"
            jwks.keys = [KEY_A, KEY_B]  # the tenant rotated its signing key
            await validate_id_token(sign(claims(), KEY_B), cache, check())
            assert jwks.fetches == 2, "refetched once for kid b"
            with pytest.raises(SignInFailed, match=r"unknown key \(kid 'zzz'\)"):
                await validate_id_token(
                    sign(claims(), RSAKey.generate_key(2048, parameters={"kid": "zzz"})), cache, check()
                )
            assert jwks.fetches == 3, "one refetch, not a loop"

    asyncio.run(go())


@pytest.mark.parametrize("claim", ["exp", "iat", "auth_time", "custom"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_number_in_any_claim_is_rejected(claim, value):
    """JSON has no NaN or Infinity, but the parser reads them: `exp: NaN` would never compare as expired."""
    body = claims(auth_time=int(time.time()))
    body[claim] = value if claim != "custom" else {"nested": [1, value]}
    with pytest.raises(SignInFailed, match=f"claim '{claim}' holds a number that is not finite"):
        validate(sign(body), check(max_age=600))
