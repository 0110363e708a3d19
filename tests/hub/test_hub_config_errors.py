"""A hub setting that cannot work — a damaged NKey seed, a CA file that holds no certificate, a missing file —
is one line naming the option and exit 3 before anything connects, never a reconnect loop: for `stream --hub`,
`relay`, the app's hub check, and a viewer whose saved settings went bad after they were added."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import nkeys
import pytest

from helpers.cli_here import run_here
from tenant_events.errors import ConfigError
from tenant_events.hub.connection import HubAuth, HubOptions
from tenant_events.hub.credentials import check_hub, check_secret
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.viewer import HubViewer, ViewerConfig
from tenant_events.monitor import TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.stream.engine import EngineConfig
from tenant_events.values.stream_states import StreamState

pytestmark = pytest.mark.hub


def damaged_seed() -> str:
    """An NKey user seed with one character changed: it still starts with SU and is alphanumeric."""
    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode()
    middle = len(seed) // 2
    return seed[:middle] + ("A" if seed[middle] != "A" else "B") + seed[middle + 1 :]


def bad_files(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """option arguments → (argv part, what the line must say)."""
    (tmp_path / "bad.seed").write_text(damaged_seed() + "\n")
    (tmp_path / "not-a-cert.pem").write_text("this is not a certificate\n")
    (tmp_path / "key-only.pem").write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    (tmp_path / "a-directory").mkdir()
    return {
        "damaged seed": (
            ["--hub-nkey", str(tmp_path / "bad.seed")],
            f"--hub-nkey: {tmp_path / 'bad.seed'} is not a valid NKey user seed",
        ),
        "missing seed": (
            ["--hub-nkey", str(tmp_path / "nowhere.seed")],
            f"--hub-nkey: {tmp_path / 'nowhere.seed'} cannot be read: No such file or directory",
        ),
        "CA not a certificate": (
            ["--hub-ca", str(tmp_path / "not-a-cert.pem")],
            f"--hub-ca: {tmp_path / 'not-a-cert.pem'} holds no PEM certificate",
        ),
        "CA a key": (["--hub-ca", str(tmp_path / "key-only.pem")], "holds no PEM certificate"),
        "CA missing": (["--hub-ca", str(tmp_path / "nowhere.pem")], "does not exist"),
        "CA a directory": (["--hub-ca", str(tmp_path / "a-directory")], "is a directory, not a PEM file"),
    }


@pytest.mark.expect_warning_logs  # the error line is what the command logs (in this process)
@pytest.mark.parametrize("command", ["stream", "relay"])
def test_a_bad_hub_setting_is_one_line_and_exit_3(command, nats_single, simulator, tmp_path):
    for name, (option, said) in bad_files(tmp_path).items():
        argv = [
            command,
            "--hub",
            nats_single.urls,
            "--hub-tenant",
            "acme",
            "--data-dir",
            str(tmp_path / "data"),
            *option,
        ]
        if command == "relay":
            argv += ["--base-url", simulator.base_url]
        started = time.monotonic()
        proc = run_here(argv, {"TENANT_EVENTS_ACCESS_TOKEN": simulator.mint_token()}, limit=60)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 3, (name, proc.stderr)
        assert len(lines) == 1 and lines[0].startswith("tenant-events: ") and said in lines[0], (name, lines)
        assert time.monotonic() - started < 20, name
    assert simulator.stats()["connections_total"] == 0


def test_the_app_check_names_the_field_of_a_bad_setting(tmp_path):
    files = tmp_path / "f"
    files.mkdir()
    bad_files(files)
    with pytest.raises(ConfigError) as seed:
        check_secret("nkey", damaged_seed())
    assert seed.value.field == "hub nkey" and "not a valid NKey user seed" in seed.value.message
    options = HubOptions(("tls://127.0.0.1:1",), HubAuth(), str(files / "not-a-cert.pem"))
    with pytest.raises(ConfigError) as ca:
        asyncio.run(check_hub(options, "acme"))
    assert ca.value.field == "hub ca_file" and "holds no PEM certificate" in ca.value.message


def test_a_viewer_whose_saved_setting_went_bad_stops_with_one_error(tmp_path):
    """The CA file was fine when the hub was added and is not now: an error state, not a reconnect loop."""
    (tmp_path / "ca.pem").write_text("no longer a certificate\n")
    options = HubOptions(("tls://127.0.0.1:1",), HubAuth(), str(tmp_path / "ca.pem"))
    config = ViewerConfig(options, HubNames("acme"), name="v")

    async def go() -> list:
        monitor = TenantMonitor(
            "v",
            AppPaths.resolve(str(tmp_path / "data")).ensure(),
            EngineConfig(options.shown, name="v"),
            None,
            source=lambda writer: HubViewer(config, writer),
        )
        states: list = []
        monitor.on_state.append(states.append)
        await monitor.start()
        await asyncio.wait_for(monitor.wait(), 20)  # a terminal state ends the run
        await monitor.stop()
        return states

    states = asyncio.run(go())
    assert [s.state for s in states].count(StreamState.RECONNECTING) == 0, states
    final = [s for s in states if s.state is StreamState.ERROR]
    assert len(final) == 1 and final[0].reason == "config" and "holds no PEM certificate" in final[0].message
