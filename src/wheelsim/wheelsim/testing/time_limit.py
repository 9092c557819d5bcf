"""A hard time limit on each phase of a test (setup, call, teardown), so that a test that hangs
ends its test process in bounded time instead of holding the whole test run until CI's own limit.

At :data:`PHASE_LIMIT_S`, faulthandler's C thread writes ``Timeout (0:15:00)!`` and every
thread's Python stack to the test process's standard error and ends the process with exit 1.
It needs no interpreter lock, so it also ends a hang inside a C call that holds it (as rmw /
Fast DDS did in a node's teardown, docs/reliability.md), where a limit that runs Python code
never gets to run: pytest-timeout 2.4.0 (``--timeout 2``, either method) did not end the
deadlock of test/test_testing_time_limit.py in 40 s. pytest-xdist reports the test as failed
("worker crashed") and goes on with a new worker; a test process without workers ends there,
and the test command reports the failure.

The longest test takes about 150 s on a slow 2-core machine (BENCHMARKS.md); the stock Nav2
test's own waits give a failing goal up to 300 s.
"""

from __future__ import annotations

import faulthandler
import os
import sys
from collections.abc import Generator

import pytest

#: Seconds each phase of a test may take before its process is ended.
PHASE_LIMIT_S = 900.0
PLUGIN_NAME = 'wheelsim-phase-time-limit'


class PhaseTimeLimit:
    """The pytest plugin: arms faulthandler's timer around each phase of each test, writing to
    the standard error the test process had when pytest was configured (a test's own output is
    captured meanwhile)."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.stderr_fd = os.dup(sys.__stderr__.fileno())

    def _limited(self) -> Generator[None, None, None]:
        faulthandler.dump_traceback_later(self.limit_s, exit=True, file=self.stderr_fd)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self) -> Generator[None, None, None]:
        yield from self._limited()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self) -> Generator[None, None, None]:
        yield from self._limited()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self) -> Generator[None, None, None]:
        yield from self._limited()

    def pytest_unconfigure(self) -> None:
        os.close(self.stderr_fd)


def limit_test_phases(config: pytest.Config, limit_s: float = PHASE_LIMIT_S) -> None:
    """Give every test's setup, call and teardown ``limit_s`` seconds each (call from
    ``pytest_configure``; a second call, from a conftest.py further down, changes nothing)."""
    if not config.pluginmanager.has_plugin(PLUGIN_NAME):
        config.pluginmanager.register(PhaseTimeLimit(limit_s), PLUGIN_NAME)
