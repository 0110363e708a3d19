"""Simulator fixtures: `simulator` (default options, one per test) and `make_simulator(**options)`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tenant_events.simulator.testing import SimulatorHandle, start_simulator


@pytest.fixture
def simulator() -> Iterator[SimulatorHandle]:
    """A running simulator with the test defaults (no live events, 1 s heartbeats, no rotation)."""
    handle = start_simulator()
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def make_simulator() -> Iterator[Callable[..., SimulatorHandle]]:
    """Factory: `make_simulator(seed=3, backlog=1000, rotate_after=2)`; all are stopped after the test."""
    handles: list[SimulatorHandle] = []

    def make(**options: Any) -> SimulatorHandle:
        handle = start_simulator(**options)
        handles.append(handle)
        return handle

    try:
        yield make
    finally:
        for handle in reversed(handles):
            handle.stop()
