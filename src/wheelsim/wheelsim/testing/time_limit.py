"""A hard time limit on each phase of a test (setup, call, teardown), so that a test that hangs
ends its test process in bounded time instead of holding the whole test run until CI's own limit.

At :data:`PHASE_LIMIT_S`, faulthandler's C thread writes ``Timeout (0:15:00)!`` and every
thread's Python stack, and ends the test process with exit 1. It needs no interpreter lock, so
it also ends a hang inside a C call that holds it (as rmw / Fast DDS did in a node's teardown,
docs/reliability.md), where a limit that runs Python code never gets to run: pytest-timeout
2.4.0 (``--timeout 2``, either method) did not end the deadlock of
test/test_testing_time_limit.py in 40 s. pytest-xdist reports the test as failed ("worker
crashed") and goes on with a new worker; a test process without workers ends there, and the
test command reports the failure.

The stacks go to the test process's standard error, or, with ``WHEELSIM_TEST_HANG_DIR`` set (the
test command sets it to its results folder), to ``hung-test-<pid>.txt`` there after a line naming
the test and the phase (the line of the phase running: a process ended otherwise, by a crash or a
signal, leaves a file with that line only), where the test command prints those with a dump
again at its end; the file of a test process that ends by itself is removed.

The longest test takes about 150 s on a slow 2-core machine (BENCHMARKS.md); the stock Nav2
test's own waits give a failing goal up to 300 s.
"""

from __future__ import annotations

import faulthandler
import os
import sys
from collections.abc import Generator
from pathlib import Path

import pytest

#: Seconds each phase of a test may take before its process is ended.
PHASE_LIMIT_S = 900.0
PLUGIN_NAME = 'wheelsim-phase-time-limit'
#: The environment variable naming the folder of the dumps (else standard error).
HANG_DIR_VARIABLE = 'WHEELSIM_TEST_HANG_DIR'


class PhaseTimeLimit:
    """The pytest plugin: arms faulthandler's timer around each phase of each test. Without a
    dump folder it writes to the standard error the test process had when pytest was
    configured (a test's own output is captured meanwhile)."""

    def __init__(self, limit_s: float, hang_dir: str | None) -> None:
        self.limit_s = limit_s
        self.dump_path = None
        if hang_dir is None:
            self.fd = os.dup(sys.__stderr__.fileno())
        else:
            self.dump_path = Path(hang_dir) / f'hung-test-{os.getpid()}.txt'
            self.fd = os.open(self.dump_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)

    def _limited(self, item: pytest.Item, phase: str) -> Generator[None, None, None]:
        if self.dump_path is not None:  # the file holds the last phase's line only
            os.ftruncate(self.fd, 0)
            os.lseek(self.fd, 0, os.SEEK_SET)
            os.write(self.fd, f'{item.nodeid} ({phase})\n'.encode())
        faulthandler.dump_traceback_later(self.limit_s, exit=True, file=self.fd)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._limited(item, 'setup')

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._limited(item, 'call')

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._limited(item, 'teardown')

    def pytest_unconfigure(self) -> None:
        os.close(self.fd)
        if self.dump_path is not None:
            self.dump_path.unlink(missing_ok=True)


def limit_test_phases(config: pytest.Config, limit_s: float = PHASE_LIMIT_S) -> None:
    """Give every test's setup, call and teardown ``limit_s`` seconds each (call from
    ``pytest_configure``; a second call, from a conftest.py further down, changes nothing)."""
    if not config.pluginmanager.has_plugin(PLUGIN_NAME):
        config.pluginmanager.register(
            PhaseTimeLimit(limit_s, os.environ.get(HANG_DIR_VARIABLE)), PLUGIN_NAME)
