"""Hub fixtures: `nats_single` (packaging/nats/hub.conf) and `nats_cluster` (three cluster.conf nodes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.nats_hub import NatsHub, start_cluster, start_single


@pytest.fixture
def nats_single(tmp_path: Path) -> Iterator[NatsHub]:
    hub = start_single(tmp_path / "nats")
    try:
        yield hub
    finally:
        hub.stop()


@pytest.fixture
def nats_cluster(tmp_path: Path) -> Iterator[NatsHub]:
    hub = start_cluster(tmp_path / "nats")
    try:
        yield hub
    finally:
        hub.stop()
