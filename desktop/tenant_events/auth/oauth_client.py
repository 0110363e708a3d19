"""The token endpoint, revocation and userinfo calls of a public native client (no secret, RFC 8252 §8.4).

A small module on the project's one HTTP client (`tenant_events.http.api_client()`) rather than authlib:
authlib ≥ 1.8 warns on import with httpx and the suite turns warnings into errors; what we need
is four form POSTs and one GET. Error bodies are `{"error", "error_description"}` at any status: Auth0 answers
403 for a bad code or refresh token where RFC 6749 §5.2 says 400, so callers branch on `error`.
"""

from __future__ import annotations

import logging

import httpx
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError

from tenant_events.auth.discovery import ProviderMetadata
from tenant_events.auth.errors import SignInFailed, TokenEndpointError
from tenant_events.errors import NetworkError

log = logging.getLogger(__name__)


class TokenResponse(BaseModel):
    """RFC 6749 §5.1 plus the OIDC `id_token`; secrets print as `**********`."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    access_token: SecretStr
    token_type: str
    expires_in: int | None = None
    refresh_token: SecretStr | None = None
    id_token: SecretStr | None = None
    scope: str | None = None


class UserInfo(BaseModel):
    """The user profile object of the auth API (`/userinfo`); the app shows name and picture."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    sub: str
    name: str | None = None
    nickname: str | None = None
    email: str | None = None
    picture: str | None = None

    @property
    def display_name(self) -> str:
        return self.name or self.nickname or self.email or self.sub


class _ErrorBody(BaseModel):
    model_config = ConfigDict(extra="ignore")
    error: str
    error_description: str = ""


def _raise_for_error(response: httpx.Response, what: str) -> None:
    if response.is_success:
        return
    try:
        body = _ErrorBody.model_validate_json(response.content)
    except ValidationError:
        raise NetworkError(
            f"the tenant's {what} endpoint answered {response.status_code} without an OAuth error body",
            "try again later",
        ) from None
    raise TokenEndpointError(body.error, body.error_description, response.status_code)


class OAuthClient:
    """One tenant's token-endpoint calls for one public client ID."""

    def __init__(self, http: httpx.AsyncClient, metadata: ProviderMetadata, client_id: str) -> None:
        self._http = http
        self.metadata = metadata
        self.client_id = client_id

    async def _token_request(self, form: dict[str, str], what: str) -> TokenResponse:
        try:
            response = await self._http.post(self.metadata.token_endpoint, data=form)
        except httpx.HTTPError as exc:
            raise NetworkError(
                f"cannot reach the token endpoint {self.metadata.token_endpoint}: {exc}"
            ) from exc
        _raise_for_error(response, "token")
        try:
            return TokenResponse.model_validate_json(response.content)
        except ValidationError as exc:
            raise SignInFailed(
                "invalid_response", f"the {what} answer is not a token response ({exc.error_count()} errors)"
            ) from None

    async def exchange_code(self, code: str, redirect_uri: str, code_verifier: str) -> TokenResponse:
        """RFC 6749 §4.1.3 with the PKCE verifier (RFC 7636 §4.5)."""
        return await self._token_request(
            {
                "grant_type": "authorization_code",
                "client_id": self.client_id,
                "code": code,
                "code_verifier": code_verifier,
                "redirect_uri": redirect_uri,
            },
            "code exchange",
        )

    async def refresh(self, refresh_token: str) -> TokenResponse:
        """RFC 6749 §6; with rotation on, the answer carries a new refresh token."""
        return await self._token_request(
            {"grant_type": "refresh_token", "client_id": self.client_id, "refresh_token": refresh_token},
            "refresh",
        )

    async def revoke(self, token: str, hint: str = "refresh_token") -> None:
        """RFC 7009 §2.1; 200 even when the token was already invalid (§2.2)."""
        if not self.metadata.revocation_endpoint:
            log.info("the tenant has no revocation endpoint; only the local copy is removed")
            return
        form = {"client_id": self.client_id, "token": token, "token_type_hint": hint}
        try:
            response = await self._http.post(self.metadata.revocation_endpoint, data=form)
        except httpx.HTTPError as exc:
            raise NetworkError(f"cannot reach the revocation endpoint: {exc}") from exc
        _raise_for_error(response, "revocation")

    async def userinfo(self, access_token: str) -> UserInfo:
        """GET /userinfo with the bearer token."""
        if not self.metadata.userinfo_endpoint:
            raise SignInFailed("invalid_request", "the tenant has no userinfo endpoint")
        try:
            response = await self._http.get(
                self.metadata.userinfo_endpoint, headers={"Authorization": f"Bearer {access_token}"}
            )
        except httpx.HTTPError as exc:
            raise NetworkError(f"cannot reach the userinfo endpoint: {exc}") from exc
        if response.status_code == 401:
            raise TokenEndpointError("invalid_token", "userinfo refused the access token", 401)
        _raise_for_error(response, "userinfo")
        try:
            return UserInfo.model_validate_json(response.content)
        except ValidationError:
            raise SignInFailed("invalid_response", "the userinfo answer has no 'sub'") from None
