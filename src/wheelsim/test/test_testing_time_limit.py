"""wheelsim.testing.time_limit: a test that hangs, even inside a C call holding the interpreter
lock, ends its test process at the limit with every thread's stack, and pytest-xdist goes on
with the other tests."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

from wheelsim.testing.time_limit import HANG_DIR_VARIABLE, PHASE_LIMIT_S, PLUGIN_NAME

#: A hang no Python-level limit can end: a deadlock in C (a mutex locked twice by the thread
#: that holds it, where a signal does not end the wait), called through ctypes.PyDLL, which
#: keeps the interpreter lock.
HANGING_TESTS = '''
import ctypes


def test_hangs_holding_the_interpreter_lock():
    libc, mutex = ctypes.PyDLL(None), ctypes.create_string_buffer(64)  # PTHREAD_MUTEX_INITIALIZER
    libc.pthread_mutex_lock(mutex)
    libc.pthread_mutex_lock(mutex)


def test_passes():
    pass
'''
CONFTEST = '''
from wheelsim.testing.time_limit import limit_test_phases


def pytest_configure(config):
    limit_test_phases(config, 2.0)
'''


def run_pytest(folder, *arguments: str, hang_dir=None) -> tuple[int, str, float]:
    # not colcon's PYTEST_ADDOPTS (its junit file, -q, two workers) nor the test command's dumps
    env = {key: value for key, value in os.environ.items()
           if key not in (HANG_DIR_VARIABLE, 'PYTEST_ADDOPTS')}
    if hang_dir is not None:
        env[HANG_DIR_VARIABLE] = str(hang_dir)
    started_s = time.monotonic()
    done = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-p', 'no:random_order',
         *arguments, 'test_hang.py'],
        cwd=folder, capture_output=True, text=True, timeout=120, env=env)
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started_s


@pytest.fixture
def hanging_tests(tmp_path):
    (tmp_path / 'conftest.py').write_text(textwrap.dedent(CONFTEST))
    (tmp_path / 'test_hang.py').write_text(textwrap.dedent(HANGING_TESTS))
    return tmp_path


def test_a_hang_holding_the_interpreter_lock_ends_the_process_with_its_stack(hanging_tests):
    code, output, seconds = run_pytest(hanging_tests, '-k', 'hangs')
    assert code == 1, output
    assert seconds < 45.0, f'{seconds:.1f} s:\n{output}'
    assert 'Timeout (0:00:02)!' in output, output
    assert 'line 8 in test_hangs_holding_the_interpreter_lock' in output, output


def test_with_xdist_the_hang_fails_the_others_run_and_its_dump_file_names_it(
        hanging_tests, tmp_path_factory):
    hang_dir = tmp_path_factory.mktemp('hangs')
    code, output, seconds = run_pytest(hanging_tests, '-n', '1', hang_dir=hang_dir)
    assert code == 1, output
    assert seconds < 45.0, f'{seconds:.1f} s:\n{output}'
    assert "crashed while running 'test_hang.py::test_hangs_holding_the_interpreter_lock'" in output
    assert '1 failed, 1 passed' in output, output
    # the stacks in the crashed worker's file only, none on standard error; no other file left
    assert 'Timeout (' not in output, output
    dumps = list(hang_dir.iterdir())
    assert len(dumps) == 1 and dumps[0].name.startswith('hung-test-'), dumps
    text = dumps[0].read_text()
    assert text.startswith(
        'test_hang.py::test_hangs_holding_the_interpreter_lock (call)\nTimeout (0:00:02)!\n'), text
    assert 'line 8 in test_hangs_holding_the_interpreter_lock' in text, text


def test_this_test_run_has_the_limit(request):
    plugin = request.config.pluginmanager.get_plugin(PLUGIN_NAME)
    assert plugin is not None and plugin.limit_s == PHASE_LIMIT_S
