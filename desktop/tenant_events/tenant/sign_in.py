"""Sign-in of one tenant profile: restore the stored sign-in, sign in through the browser, sign out.

    restore()  ─▶ stored refresh token (keyring) + discovery ─▶ AuthSession (refreshes access tokens itself)
    sign_in()  ─▶ browser + loopback listener (auth/sign_in.py) ─▶ AuthSession, refresh token stored
    sign_out() ─▶ RFC 7009 revoke at the tenant, then the stored token is forgotten whatever happens

The `AuthSession` is the stream engine's token provider. Every request goes through the HTTP client of the
tenant's link (tenant/link.py), which is handed in as a getter because the link opens it on first use.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from tenant_events.auth import discovery
from tenant_events.auth import sign_in as flows
from tenant_events.auth.loopback import LoopbackListener
from tenant_events.auth.oauth_client import OAuthClient
from tenant_events.auth.secret_store import SecretStore, SecretStoreUnavailable
from tenant_events.auth.session import AuthSession
from tenant_events.auth.sign_in import SignInOptions, SignInResult
from tenant_events.auth.stored_sign_in import SignInSlot, slot_for
from tenant_events.errors import UserFixableError
from tenant_events.http import api_client
from tenant_events.settings import TenantProfile

log = logging.getLogger(__name__)
Opener = Callable[[str], Awaitable[None] | None]


class TenantSignIn:
    """The sign-in state of one profile; `session` is None until restored or signed in."""

    def __init__(
        self,
        profile: TenantProfile,
        secrets: SecretStore,
        http: Callable[[], httpx.AsyncClient],
        data_dir: Path | None = None,
    ) -> None:
        """`data_dir`: the profile's data dir; its sign-in slot and refresh lock belong to it."""
        self.profile = profile
        self.secrets = secrets
        self.slot: SignInSlot = slot_for(profile, data_dir)
        self._http = http
        self.session: AuthSession | None = None
        self.user = ""  # the display name, known after a browser sign-in (a restore does not ask)

    async def restore(self) -> AuthSession:
        """The stored sign-in, without a browser; SignInRequired when none is stored."""
        self.session = await flows.restore_session(self._http(), self.profile, self.secrets, self.slot)
        return self.session

    async def sign_in(
        self,
        opener: Opener,
        *,
        on_listener: Callable[[LoopbackListener], None] | None = None,
        options: SignInOptions | None = None,
    ) -> SignInResult:
        """Through the browser; SignInRequired (SignInFailed) for every way it can fail."""
        result = await flows.sign_in(
            self._http(), self.profile, self.secrets, opener, options, on_listener=on_listener, slot=self.slot
        )
        self.session = result.session
        self.user = result.user.display_name
        try:  # an old-form slot (the profile name alone) is never read again: do not leave a token in it
            if self.slot.legacy_key != self.slot.key:
                await asyncio.to_thread(self.secrets.delete, self.slot.legacy_key)
        except SecretStoreUnavailable as exc:
            log.info("%s: could not clear the old-form keyring slot: %s", self.profile.name, exc)
        return result

    async def sign_out(self) -> str | None:
        """Revoke and forget the stored sign-in; None, or why the tenant could not be told (it is forgotten
        locally all the same)."""
        session, self.session, self.user = self.session, None, ""
        try:
            if session is None:
                meta = await discovery.fetch_metadata(self._http(), self.profile.auth_url)
                session = AuthSession(
                    self.slot, OAuthClient(self._http(), meta, self.profile.client_id), self.secrets
                )
            await session.sign_out()  # revokes, then deletes the keyring entry whatever happens
        except (UserFixableError, httpx.HTTPError) as exc:
            await self.forget()
            log.info("%s: the sign-in was forgotten here but not revoked: %s", self.profile.name, exc)
            return str(exc)
        return None

    async def forget(self) -> None:
        """The stored sign-in out of the secret store, every piece of it, without telling the tenant."""
        for key in dict.fromkeys((self.slot.key, self.slot.legacy_key)):
            await asyncio.to_thread(self.secrets.delete, key)

    async def logout_url(self, return_to: str | None = None) -> str:
        """The tenant's browser logout page (ends its own session cookie there)."""
        meta = await discovery.fetch_metadata(self._http(), self.profile.auth_url)
        return flows.logout_url(meta, self.profile, return_to)


async def check_tenant(auth_url: str, field: str = "domain") -> None:
    """The domain is this tenant's OpenID provider (checked before a profile is saved, so before any link
    exists: a client of its own); a UserFixableError naming `field` otherwise."""
    async with api_client() as http:
        await discovery.check_tenant(http, auth_url, field)
