"""Run the simulator under uvicorn on 127.0.0.1: bind first (port 0 = any free port), then serve.

`SimulatorServer` is used both by the CLI (main thread, signals handled by uvicorn) and by testing.py
(background thread). Open event streams are ended cleanly on shutdown so it never hangs on them.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading
from collections.abc import Callable, Generator

import uvicorn

from tenant_events.simulator.app import create_app
from tenant_events.simulator.config import SimulatorConfig
from tenant_events.simulator.events_api import DropConnection
from tenant_events.simulator.state import SimState

log = logging.getLogger(__name__)


class _DropFilter(logging.Filter):
    """uvicorn logs an aborted response as an error; the drop_mid_frame fault does that on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], DropConnection))


class _Uvicorn(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, state: SimState, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self.sim_state = state
        self.on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.on_ready()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """SIGINT/SIGTERM stop the server gracefully and the CLI exits 0 (uvicorn would re-raise them)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.sim_state.end_streams()
        await super().shutdown(sockets)


class SimulatorServer:
    """One simulator: state, backlog, listening socket and the uvicorn server."""

    def __init__(self, config: SimulatorConfig, on_ready: Callable[[], None] = lambda: None) -> None:
        """Bind, build the state and fill the backlog; `on_ready` runs (on the server loop) once listening."""
        self.config = config
        if config.host not in ("127.0.0.1", "::1", "localhost"):
            raise ValueError(f"the simulator listens on loopback only; got host {config.host!r}")
        self.sock = socket.socket(
            socket.AF_INET6 if ":" in config.host else socket.AF_INET, socket.SOCK_STREAM
        )
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted sockets inherit it on Linux: no 40 ms Nagle/delayed-ACK stall between header and body writes.
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.sock.bind((config.host, config.port))
        except OSError as exc:
            self.sock.close()
            raise OSError(exc.errno, f"cannot listen on {config.host}:{config.port}: {exc.strerror}") from exc
        self.port = int(self.sock.getsockname()[1])
        host = f"[{config.host}]" if ":" in config.host else config.host
        try:
            self.state = SimState(config)  # a bad scenario file is refused here: the socket must not leak
        except BaseException:
            self.sock.close()
            raise
        self.state.bind(f"http://{host}:{self.port}")
        self.state.activity.fill_backlog(config.backlog)
        logging.getLogger("uvicorn.error").addFilter(_DropFilter())
        uv_config = uvicorn.Config(
            create_app(self.state),
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=3,
            ws="none",
            http="auto",
        )
        self.server = _Uvicorn(uv_config, self.state, on_ready)

    @property
    def auth_url(self) -> str:
        return self.state.auth_url

    @property
    def base_url(self) -> str:
        return self.state.base_url

    async def serve(self) -> None:
        try:
            await self.server.serve(sockets=[self.sock])
        finally:
            self.state.close()

    def request_stop(self) -> None:
        self.server.should_exit = True

    @property
    def started(self) -> bool:
        return bool(self.server.started)

    def ready_lines(self) -> list[str]:
        service = self.state.clients.get("tenant-events-service")
        assert service is not None and service.secret is not None
        return [
            f"Tenant simulator ready: base_url={self.base_url} auth_url={self.auth_url}",
            "  demo client (public, PKCE, any-port loopback redirect to /callback): tenant-events-demo",
            f"  service client (client_credentials): id=tenant-events-service secret={service.secret}",
        ]
