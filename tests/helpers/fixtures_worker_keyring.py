"""Fail the test during which the worker's keyring daemon died (tests/helpers/worker_session.py): a later test
of the worker would otherwise fail for it, or pass on the daemon started in its place, and nobody would know."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.worker_session import keyring_death


@pytest.fixture(autouse=True)
def _the_worker_keyring_lives() -> Iterator[None]:
    yield
    death = keyring_death()
    if death:
        pytest.fail(death)
