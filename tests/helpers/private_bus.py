"""A D-Bus daemon of a test's own (a session bus, or one with a configuration of the test's), for keyring tests
that must control what is on the bus."""

from __future__ import annotations

import subprocess


def start_private_bus(env: dict[str, str], config: str | None = None) -> tuple[subprocess.Popen[str], str]:
    """The daemon and its address; `config`: a bus configuration file instead of the session bus's."""
    kind = [f"--config-file={config}"] if config is not None else ["--session"]
    bus = subprocess.Popen(
        ["dbus-daemon", *kind, "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert bus.stdout is not None
    address = bus.stdout.readline().strip()
    assert address, "dbus-daemon printed no address"
    return bus, address
