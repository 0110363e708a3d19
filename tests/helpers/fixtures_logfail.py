"""Fail a test on any WARNING (or worse) log line it did not expect.

A warning in the log is a surprise the user would see in their log file; a test that provokes one on purpose
says so with `@pytest.mark.expect_warning_logs` or by inspecting logs through `caplog`, which takes the
records over. Records from third-party loggers count too: a library complaining is a surprise as well.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


class _Collector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "expect_warning_logs: the test provokes WARNING log lines on purpose (not failed for them)"
    )


@pytest.fixture(autouse=True)
def _fail_on_warning_logs(request: pytest.FixtureRequest) -> Iterator[None]:
    collector = _Collector()
    root = logging.getLogger()
    root.addHandler(collector)
    try:
        yield
    finally:
        root.removeHandler(collector)
    if request.node.get_closest_marker("expect_warning_logs") or "caplog" in request.fixturenames:
        return
    if collector.records:
        lines = "\n".join(f"  {r.levelname} {r.name}: {r.getMessage()}" for r in collector.records[:10])
        pytest.fail(f"unexpected WARNING log lines (mark the test expect_warning_logs if intended):\n{lines}")
