"""A signed-in tenant: hands access tokens to the stream engine and refreshes them (the engine's TokenProvider).

Refresh is single-flight: concurrent callers wait on one request, and a caller that queued behind a refresh that
already finished takes its result instead of spending the (rotated, now dead) refresh token again, which the
server would treat as reuse and revoke the whole family (Auth0's refresh token rotation). Across processes
sharing the profile, the refresh holds the slot's file lock (auth/stored_sign_in.py) and reads the stored token
again first: another process may have rotated it. A rotated refresh token is saved to the secret store BEFORE the
lock is let go and the new access token handed out. A locked keyring's unlock prompt comes before the lock, never
under it (a prompt left open would hold every other process), and is waited for a bounded time. `invalid_grant` (Auth0
answers 403) deletes the stored token and raises SignInRequired("signed out: sign in again"); events and
cursor belong to the store and are untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable

from tenant_events.auth.errors import TokenEndpointError
from tenant_events.auth.oauth_client import OAuthClient, TokenResponse
from tenant_events.auth.secret_store import (
    MemorySecretStore,
    SecretStore,
    SecretStoreUnavailable,
    unlock_first,
)
from tenant_events.auth.stored_sign_in import SignInSlot, refresh_lock
from tenant_events.errors import SignInRequired, waiting_for_sign_in

log = logging.getLogger(__name__)

EXPIRY_MARGIN = 30.0  # refresh this long before `expires_in` runs out


def signed_out(tenant: str) -> SignInRequired:
    return SignInRequired(
        f"signed out of {tenant}: sign in again", f"run: tenant-events login --tenant {tenant}"
    )


class AuthSession:
    """Implements `tenant_events.stream.tokens.TokenProvider` for one tenant profile."""

    def __init__(
        self,
        slot: SignInSlot | str,
        client: OAuthClient,
        store: SecretStore,
        *,
        refresh_token: str | None = None,
        tokens: TokenResponse | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(slot, str):  # a slot named by the profile alone, shared with no other process
            slot = SignInSlot(name=slot, key=slot, legacy_key=slot, lock_file=None)
        self.slot = slot
        self.tenant = slot.name
        self.client = client
        self.store = store
        self.notice: str | None = None
        # Told what a refresh waits for when another process holds the sign-in's lock for a while (the stream
        # says it at once rather than when the wait runs out).
        self.on_wait: Callable[[str], None] | None = None
        self._clock = clock
        self._refresh_token = refresh_token
        self._access_token: str | None = None
        self._expires_at = 0.0
        self._generation = 0
        self._lock = asyncio.Lock()
        self.refreshes = 0
        if tokens is not None:
            self._take(tokens)

    def __repr__(self) -> str:
        return f"AuthSession({self.tenant!r}, store={self.store.description!r})"

    def _take(self, tokens: TokenResponse) -> None:
        self._access_token = tokens.access_token.get_secret_value()
        self._expires_at = self._clock() + (tokens.expires_in if tokens.expires_in is not None else 3600)
        self._generation += 1

    async def save_refresh_token(self, token: str) -> None:
        """Persist first (under the slot's lock); if the keyring fails now, keep signing in for this session
        and say so."""
        await self._unlock_first()
        async with refresh_lock(self.slot):
            await self._save(token)

    async def _unlock_first(self) -> None:
        """The keyring's unlock prompt, if it is locked, before the slot's lock is taken (bounded): a user who
        leaves it open holds back no other process; under the lock a locked keyring is refused. Waited for on a
        daemon thread, not the default executor, whose shutdown an app that quits meanwhile would wait for."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str | None] = loop.create_future()

        def settle(problem: str | None) -> None:
            if not answer.done():
                answer.set_result(problem)

        def ask() -> None:
            try:
                problem = unlock_first(self.store)
            except Exception as exc:  # a backend's bug: the calls under the lock say what is wrong
                problem = f"the system keyring failed to unlock ({type(exc).__name__})"
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
                loop.call_soon_threadsafe(settle, problem)

        threading.Thread(target=ask, name="keyring-unlock-wait", daemon=True).start()
        problem = await answer
        if problem is not None:
            log.info("the sign-in of %s goes on without the keyring: %s", self.tenant, problem)

    async def _save(self, token: str) -> None:
        self._refresh_token = token
        try:
            await asyncio.to_thread(self.store.set, self.slot.key, token)
        except SecretStoreUnavailable as exc:
            self.notice = f"Sign-in will last only while the app runs: {exc}"
            log.warning("%s", self.notice)
            self.store = MemorySecretStore()
            self.store.set(self.slot.key, token)

    async def _current_token(self) -> str | None:
        """The stored token (another process sharing the slot may have rotated it), else the one held here.

        A persistent store with nothing in the slot means another process signed out or was refused: the
        token held here is of the same, dead, family."""
        try:
            stored = await asyncio.to_thread(self.store.get, self.slot.key)
        except SecretStoreUnavailable as exc:
            log.warning("could not read the stored sign-in of %s (%s); using the one held", self.tenant, exc)
            return self._refresh_token
        if stored is not None or self.store.persistent:
            self._refresh_token = stored
        return self._refresh_token

    async def access_token(self) -> str:
        if self._access_token is not None and self._clock() < self._expires_at - EXPIRY_MARGIN:
            return self._access_token
        return await self._refresh(self._generation)

    async def refresh(self) -> str:
        return await self._refresh(self._generation)

    async def _refresh(self, seen_generation: int) -> str:
        async with self._lock:
            if self._generation != seen_generation and self._access_token is not None:
                return self._access_token  # someone refreshed while we waited: single flight
            await self._unlock_first()
            async with refresh_lock(self.slot, on_wait=self._waiting):
                refresh_token = await self._current_token()
                if not refresh_token:
                    self._access_token = None
                    raise signed_out(self.tenant)
                try:
                    tokens = await self.client.refresh(refresh_token)
                except TokenEndpointError as exc:
                    if exc.error != "invalid_grant":
                        raise
                    log.warning("the tenant refused the stored sign-in for %s (%s)", self.tenant, exc.error)
                    await self.forget()
                    raise signed_out(self.tenant) from exc
                self.refreshes += 1
                if tokens.refresh_token is not None:
                    await self._save(tokens.refresh_token.get_secret_value())
            self._take(tokens)
            assert self._access_token is not None
            return self._access_token

    def _waiting(self) -> None:
        if self.on_wait is not None:
            self.on_wait(waiting_for_sign_in(self.tenant))

    async def forget(self) -> None:
        """Drop every token of this session, the stored refresh token included."""
        self._refresh_token = None
        self._access_token = None
        keys = dict.fromkeys((self.slot.key, self.slot.legacy_key))  # the old form of the slot too
        try:
            for key in keys:
                await asyncio.to_thread(self.store.delete, key)
        except SecretStoreUnavailable as exc:
            log.warning("could not remove the stored sign-in of %s: %s", self.tenant, exc)

    async def sign_out(self) -> None:
        """Revoke the refresh token at the tenant (RFC 7009), then forget it locally whatever happens."""
        await self._unlock_first()
        async with refresh_lock(self.slot):
            try:
                token = await self._current_token()
                if token:
                    await self.client.revoke(token)
            finally:
                await self.forget()
