"""`TenantLink`: everything this machine keeps for one tenant, Qt-free, used the same way by the app and the CLI.

    cli/ (asyncio.run) ─┐                     ┌▶ TenantSignIn (restore, browser, refresh, sign-out) ─▶ HTTP client
    ui/ (signal adapter)┴─▶ TenantLink ───────┼▶ TenantMonitor ─▶ StreamEngine or hub viewer ─▶ StoreWriter
                                              ├▶ AlertRules (alerts/runner.py on every commit)
                                              └▶ readers (open_reader, the window's TenantReaders)

Why a "link": the tenant itself lives elsewhere (its service, or a team hub carrying it); this is the live
connection to it plus the local copy, and it outlives any one stream (sign out and in again, pause, restart).

Observers are plain lists of callbacks, called on the loop's thread:
  * `on_state(StateChange)` — the stream's state lines;
  * `on_commit(CommittedRows)` — the seq range each commit made visible (tenant/committed_rows.py);
  * `on_alerts(StepResult)` — each rule evaluation that raised or updated alerts (empty without rules).
Shutdown order (docs/architecture.md "Threads"): stop() cancels the stream, commits what is pending, lets the rules evaluate the last
commits and closes the database; close() also closes the readers and the HTTP client.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import httpx

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.evaluator import StepResult
from tenant_events.auth.loopback import LoopbackListener
from tenant_events.auth.sign_in import SignInOptions, SignInResult
from tenant_events.errors import ConfigError, SignInRequired, StorageError
from tenant_events.http import api_client
from tenant_events.monitor import EventSource, TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.store import CommitResult, EventReader, OpenNotice
from tenant_events.stream.engine import EngineConfig
from tenant_events.stream.outcomes import Reason
from tenant_events.stream.tokens import TokenProvider
from tenant_events.tenant.alert_rules import AlertRules
from tenant_events.tenant.committed_rows import CommittedRows, RowRanges
from tenant_events.tenant.origin import check_origin, record_origin, recorded_origin
from tenant_events.tenant.sign_in import Opener, TenantSignIn
from tenant_events.tenant.sources import HubFrom, Source, StoredSignIn, StreamFrom, fixed_tokens
from tenant_events.values.retention import Retention
from tenant_events.values.stream_states import EngineStats, StateChange, StreamState
from tenant_events.view.tenant_reader import TenantReader

log = logging.getLogger(__name__)

NOT_STARTED = StateChange(StreamState.STOPPED, "not started")


class _SignedInTokens:
    """The engine's token provider for a profile: whatever sign-in the link holds now (after a sign-out and a
    new sign-in, the next connection uses the new one). `on_wait` hears what a refresh waits for."""

    def __init__(self, sign_in: TenantSignIn, on_wait: Callable[[str], None]) -> None:
        self._sign_in = sign_in
        self._on_wait = on_wait

    def _session(self) -> TokenProvider:
        session = self._sign_in.session
        if session is None:
            raise SignInRequired(f"not signed in to {self._sign_in.profile.name}")
        session.on_wait = self._on_wait
        return session

    async def access_token(self) -> str:
        return await self._session().access_token()

    async def refresh(self) -> str:
        return await self._session().refresh()


class TenantLink:
    """One tenant followed into its own database; `start()` → following, `stop()` → flushed, `close()` → done."""

    def __init__(
        self,
        name: str,
        paths: AppPaths,
        source: Source,
        *,
        retention: Retention | None = None,
        alerts: AlertSettings | None = None,
        strict_rules: bool = True,
    ) -> None:
        """`alerts`: the settings' rules (None: no rules run); with `strict_rules` a bad rule raises BadRules
        here, before anything starts."""
        self.name = name
        self.paths = paths
        self.source = source
        self.retention = retention
        self.on_state: list[Callable[[StateChange], None]] = []
        self.on_commit: list[Callable[[CommittedRows], None]] = []
        self.on_alerts: list[Callable[[StepResult], None]] = []
        self.rules: AlertRules | None = None
        self.team_alerts = False  # the hub's relay evaluates for the team: the rules do not run here
        if alerts is not None:
            self.rules = AlertRules(
                name, alerts, self.on_alerts, strict=strict_rules, by_received=self._hub_time
            )
        self.ranges = RowRanges(name)
        # The window's UI thread (table, detail pane), its workers (aggregates, counts, export) and a query's
        # first page each read on their own connection: a query's first page never waits behind an aggregates
        # pass over the whole store.
        self.ui_reader: TenantReader | None = None
        self.worker_reader: TenantReader | None = None
        self.search_reader: TenantReader | None = None
        self._http: httpx.AsyncClient | None = None
        self._monitor: TenantMonitor | None = None
        credentials = source.credentials if isinstance(source, StreamFrom) else None
        self.sign_in_state: TenantSignIn | None = None
        if isinstance(credentials, StoredSignIn):
            self.sign_in_state = TenantSignIn(
                credentials.profile, credentials.secrets, self.http, paths.data_dir
            )

    # -- what it is ------------------------------------------------------------------------------------
    @property
    def _hub_time(self) -> bool:
        """Whether events are received when the hub stored them (the rules then judge age by that)."""
        return isinstance(self.source, HubFrom) and self.source.hub_time

    @property
    def database_file(self) -> Path:
        return self.paths.database_file(self.name)

    @property
    def monitor(self) -> TenantMonitor | None:
        """The running monitor (engine + writer), None while stopped."""
        return self._monitor if self._monitor is not None and self._monitor.running else None

    @property
    def running(self) -> bool:
        return self.monitor is not None

    @property
    def state(self) -> StateChange:
        return self._monitor.state if self._monitor is not None else NOT_STARTED

    @property
    def stats(self) -> EngineStats:
        return self._monitor.stats if self._monitor is not None else EngineStats()

    @property
    def notice(self) -> OpenNotice | None:
        """What opening the database had to say (a repaired or a newer file), once started."""
        return self._monitor.notice if self._monitor is not None else None

    @property
    def is_signed_in(self) -> bool:
        """Has credentials to stream with: a restored or new sign-in, or credentials that need none."""
        return self.sign_in_state is None or self.sign_in_state.session is not None

    @property
    def user(self) -> str:
        return self.sign_in_state.user if self.sign_in_state is not None else ""

    def http(self) -> httpx.AsyncClient:
        """The link's HTTP client (tenant_events/http.py), opened on first use, closed by close()."""
        if self._http is None:
            self._http = api_client()
        return self._http

    # -- sign-in -----------------------------------------------------------------------------------------
    def _signing(self) -> TenantSignIn:
        if self.sign_in_state is None:
            raise SignInRequired(f"{self.name} is not followed with a sign-in of its own")
        return self.sign_in_state

    async def restore(self) -> None:
        """The stored sign-in (no browser); SignInRequired when there is none."""
        await self._signing().restore()

    async def sign_in(
        self,
        opener: Opener,
        *,
        on_listener: Callable[[LoopbackListener], None] | None = None,
        options: SignInOptions | None = None,
    ) -> SignInResult:
        """Sign in through the browser (`opener` shows the address); SignInRequired when it fails."""
        return await self._signing().sign_in(opener, on_listener=on_listener, options=options)

    async def sign_out(self) -> str | None:
        """Stop following, revoke and forget the sign-in; None, or why the tenant could not be told."""
        await self.stop()
        return await self._signing().sign_out()

    async def forget_sign_in(self) -> None:
        """The stored sign-in out of the keyring without telling the tenant (a sign-in that ended after its
        tenant was removed)."""
        if self.sign_in_state is not None:
            await self.sign_in_state.forget()

    async def logout_url(self, return_to: str | None = None) -> str:
        return await self._signing().logout_url(return_to)

    def set_alert_rules(self, alerts: AlertSettings, *, strict: bool = True) -> None:
        """New rules from the settings, from the next evaluation on (the same `on_alerts` observers)."""
        if self.rules is not None:
            self.rules.replace(alerts, strict=strict)
            return
        self.rules = AlertRules(self.name, alerts, self.on_alerts, strict=strict, by_received=self._hub_time)
        if self._monitor is not None and self._monitor.running and not self.team_alerts:
            self.rules.attach(self._monitor)

    def nudge_alerts(self) -> None:
        """Evaluate now (an alert was triaged here: the rules and the deliveries take it in at once)."""
        if self.rules is not None and self.rules.runner is not None:
            self.rules.runner.kick()

    # -- following ---------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Open the database and follow; restores a stored sign-in first (SignInRequired when there is none)."""
        if self.running:
            return
        unrecorded = self._check_database()
        if self.sign_in_state is not None and self.sign_in_state.session is None:
            await self.sign_in_state.restore()
        if self._monitor is None:
            self._monitor = self._make_monitor()
            self._monitor.on_state = self.on_state  # handed down: the stream calls these itself
            self._monitor.on_commit.append(self._rows_committed)
        await self._monitor.start()
        if unrecorded and isinstance(self.source, StreamFrom):
            # the database opened (a damaged one raised above, leaving nothing beside it); the stream's task has
            # not run yet, so this is before its first write
            record_origin(self.paths, self.name, self.source.base_url)
        if self.rules is not None and self.rules.runner is None and not self.team_alerts:
            self.rules.attach(self._monitor)  # once: the runner survives a restart

    async def engine_and_tokens(self) -> tuple[EngineConfig, TokenProvider]:
        """What a relay into a team hub (hub/relay.py) needs to follow the tenant itself; restores a stored
        sign-in first (SignInRequired when there is none)."""
        if not isinstance(self.source, StreamFrom):
            raise ConfigError("--hub", "a relay follows the tenant itself, not a hub")
        self._check_database()  # the relay writes into the hub, not into this database
        if self.sign_in_state is not None and self.sign_in_state.session is None:
            await self.sign_in_state.restore()
        return self.source.engine_config(self.name), self._tokens(self.source)

    def _check_database(self) -> bool:
        """The database holds one tenant's events: refuse another's (tenant/origin.py) before anything starts.
        True when no tenant is recorded for it yet (no database, or one from before the record existed)."""
        if not isinstance(self.source, StreamFrom):
            return False
        check_origin(self.paths, self.name, self.source.base_url)
        return recorded_origin(self.paths, self.name) is None

    def _tokens(self, source: StreamFrom) -> TokenProvider:
        if isinstance(source.credentials, StoredSignIn):
            assert self.sign_in_state is not None
            return _SignedInTokens(self.sign_in_state, self._sign_in_waits)
        return fixed_tokens(source.credentials)

    def _sign_in_waits(self, waiting: str) -> None:
        """Another process has held the sign-in's lock a while: said now, not when the wait runs out (then the
        stream retries, saying it again)."""
        change = StateChange(StreamState.CONNECTING, waiting, Reason.SIGN_IN_BUSY)
        for observer in list(self.on_state):
            observer(change)

    def _make_monitor(self) -> TenantMonitor:
        source = self.source
        if isinstance(source, HubFrom):
            from tenant_events.hub.viewer_monitor import viewer_monitor  # loads the NATS client

            return viewer_monitor(
                self.name,
                self.paths,
                source.options,
                source.hub_tenant,
                source.event_types,
                retention=self.retention,
                hub_time=source.hub_time,
                team_archive=source.team_archive,
            )
        return TenantMonitor(
            self.name,
            self.paths,
            source.engine_config(self.name),
            self._tokens(source),
            retention=self.retention,
        )

    async def wait(self) -> StateChange:
        """Until the stream ends by itself (a terminal state) or is stopped; its last state."""
        assert self._monitor is not None, "start() first"
        return await self._monitor.wait()

    def _source(self) -> EventSource | None:
        return self._monitor.source if self._monitor is not None else None

    def pause(self) -> None:
        if (source := self._source()) is not None:
            source.pause()

    def resume(self) -> None:
        if (source := self._source()) is not None:
            source.resume()

    def nudge(self) -> None:
        """Reconnect now if waiting to (the machine woke up, the network came back)."""
        if (source := self._source()) is not None:
            source.nudge()

    def stop_soon(self) -> None:
        """Ask the stream to stop (safe from a signal handler); `wait()` then returns."""
        if (source := self._source()) is not None:
            source.stop()

    async def stop(self) -> None:
        """Stop the stream, commit what was received, evaluate the rules on it, close the database."""
        if self._monitor is not None:
            await self._monitor.stop()

    async def close(self) -> None:
        """stop(), then the readers and the HTTP client."""
        await self.stop()
        if self.rules is not None:
            await self.rules.detach()  # the rules' process ends with the link
        self.close_readers()
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()

    async def __aenter__(self) -> TenantLink:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    # -- reading -----------------------------------------------------------------------------------------
    def open_reader(self) -> EventReader:
        """A new read connection for the caller's thread (an export, `stream --jsonl`); the caller closes it."""
        return EventReader(self.database_file)

    def open_readers(self) -> bool:
        """The window's readers, over the database when it exists (old events stay browsable signed out)."""
        if self.ui_reader is None and self.database_file.exists() and _readable(self.database_file):
            self.ui_reader = TenantReader(self.open_reader())
            self.worker_reader = TenantReader(self.open_reader())
            self.search_reader = TenantReader(self.open_reader())
        return self.ui_reader is not None

    def close_readers(self) -> None:
        for reader in (self.ui_reader, self.worker_reader, self.search_reader):
            if reader is not None:
                reader.close()
        self.ui_reader = self.worker_reader = self.search_reader = None

    # -- observers ---------------------------------------------------------------------------------------
    def _rows_committed(self, result: CommitResult) -> None:
        rows = self.ranges.advance(result)
        if rows is None:
            return
        for callback in list(self.on_commit):
            callback(rows)


def _readable(path: Path) -> bool:
    """Whether readers may open `path` before the writer has: a damaged file is left for the writer to move
    aside (and say where) when the link starts, instead of the window reading it meanwhile."""
    from tenant_events.store.health import check_readable

    try:
        check_readable(path)
    except StorageError as exc:
        log.warning("%s", exc)
        return False
    return True
