"""OpenID provider metadata (OIDC Discovery 1.0) and the JWKS cache.

Discovery is read from `{auth_url}/.well-known/openid-configuration`; its `issuer` must name the same place
(Auth0's issuer is `https://<domain>/` with the trailing slash; OIDC Discovery §4.3). The key set
is cached and fetched again once when an ID token names a `kid` it does not hold (signing key rotation,
as Auth0 publishes it).
"""

from __future__ import annotations

import logging
import socket
from typing import Any

import httpx
from joserfc.jwk import KeySet
from pydantic import BaseModel, ConfigDict, ValidationError

from tenant_events.auth.errors import SignInFailed
from tenant_events.errors import ConfigError, NetworkError
from tenant_events.http import InsecureURLError, check_url, untrusted_certificate
from tenant_events.server_text import shown

log = logging.getLogger(__name__)


class ProviderMetadata(BaseModel):
    """The fields of the discovery document this client uses."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    userinfo_endpoint: str | None = None
    revocation_endpoint: str | None = None
    end_session_endpoint: str | None = None
    code_challenge_methods_supported: list[str] | None = None
    id_token_signing_alg_values_supported: list[str] | None = None


def _unreachable_because(exc: BaseException) -> str:
    """In words: the name does not resolve, nobody listens, no answer — else what the HTTP library says."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, socket.gaierror):
            return f"the name does not resolve (DNS: {seen.strerror})"
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        seen = seen.__cause__ or seen.__context__
    if isinstance(exc, httpx.TimeoutException):
        return "no answer in time"
    text = str(exc)
    if "All connection attempts failed" in text:
        return "connection refused or unreachable"
    return text or exc.__class__.__name__


def _same_place(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


async def fetch_metadata(client: httpx.AsyncClient, auth_url: str) -> ProviderMetadata:
    """GET the discovery document and check it before anything else is sent to its endpoints."""
    url = auth_url.rstrip("/") + "/.well-known/openid-configuration"
    try:
        response = await client.get(url)
    except httpx.HTTPError as exc:
        if (reason := untrusted_certificate(exc)) is not None:
            raise NetworkError(
                f"refused to talk to {auth_url}: its TLS certificate is not trusted ({reason})",
                "check the domain; behind a TLS-inspecting proxy, set SSL_CERT_FILE to your organisation's CA file",
            ) from exc
        raise NetworkError(
            f"cannot reach the tenant at {auth_url}: {_unreachable_because(exc)}",
            "check the domain and your network",
        ) from exc
    if response.status_code != 200:
        raise SignInFailed(
            "discovery_failed",
            f"{url} answered {response.status_code}; is {auth_url} an OpenID Connect tenant?",
            "check the domain in the tenant profile",
        )
    try:
        meta = ProviderMetadata.model_validate_json(response.content)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(document)'}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise SignInFailed(
            "discovery_failed", f"{url} is not a valid discovery document ({shown(problems)})"
        ) from exc
    if not _same_place(meta.issuer, auth_url):
        raise SignInFailed(
            "discovery_failed",
            f"the discovery document at {url} names issuer {shown(meta.issuer, 120)!r}, not {auth_url!r}",
            "use the tenant's own domain",
        )
    for name in (
        "authorization_endpoint",
        "token_endpoint",
        "jwks_uri",
        "userinfo_endpoint",
        "revocation_endpoint",
    ):
        value = getattr(meta, name)
        if value is None:
            continue
        try:
            check_url(value)
        except InsecureURLError as exc:
            raise SignInFailed("discovery_failed", f"discovery field {name}: {shown(exc)}") from exc
    methods = meta.code_challenge_methods_supported
    if methods is not None and "S256" not in methods:
        raise SignInFailed(
            "discovery_failed", f"the tenant does not support PKCE S256 (it lists {shown(methods, 120)})"
        )
    return meta


async def check_tenant(client: httpx.AsyncClient, auth_url: str, field: str = "domain") -> ProviderMetadata:
    """Before a tenant profile is saved: its discovery document answers and names this tenant as the issuer.

    NetworkError when it cannot be reached (DNS, connection, TLS); ConfigError naming `field` when what answers
    is not this tenant's OpenID provider (no discovery document, another issuer, no PKCE)."""
    try:
        return await fetch_metadata(client, auth_url)
    except SignInFailed as exc:
        hint = exc.hint if exc.hint != "sign in again" else "check the domain"
        raise ConfigError(field, exc.message, hint) from exc


class JwksCache:
    """The provider's signing keys; refetched at most once per validation when a `kid` is unknown."""

    def __init__(self, client: httpx.AsyncClient, jwks_uri: str) -> None:
        self._client = client
        self._uri = jwks_uri
        self._keys: KeySet | None = None
        self.fetches = 0

    async def _fetch(self) -> KeySet:
        self.fetches += 1
        try:
            response = await self._client.get(self._uri)
        except httpx.TransportError as exc:
            raise NetworkError(
                f"cannot reach the tenant's signing keys at {shown(self._uri)}: {shown(exc)}"
            ) from exc
        try:
            response.raise_for_status()
            data: Any = response.json()
            keys = KeySet.import_key_set(data)
        except (httpx.HTTPError, ValueError, TypeError, KeyError) as exc:
            raise SignInFailed(
                "invalid_token",
                f"cannot load the tenant's signing keys from {shown(self._uri)}: {shown(exc)}",
            ) from exc
        self._keys = keys
        return keys

    @staticmethod
    def _has_kid(keys: KeySet, kid: str | None) -> bool:
        if kid is None:
            return len(keys.keys) == 1
        return any(k.kid == kid for k in keys.keys)

    async def key_set_for(self, kid: str | None) -> KeySet:
        """The key set holding `kid`, refetching once if the cached one lacks it."""
        fresh = self._keys is None
        keys = self._keys or await self._fetch()
        if self._has_kid(keys, kid):
            return keys
        if not fresh:
            log.info("ID token signed with an unknown key id; refetching the key set once")
            keys = await self._fetch()
        if not self._has_kid(keys, kid):
            raise SignInFailed("invalid_token", f"the ID token is signed with an unknown key (kid {kid!r})")
        return keys
