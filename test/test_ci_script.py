"""What CI runs (tools/ci.sh, `make ci`): Jazzy's every test, then Kilted's quick tier, Kilted set
up beside Jazzy's tests at the lowest priority. The script runs in a copy of the tools folder
with a ``make`` on PATH that logs each call (its arguments, niceness, I/O class, start and end)
and does nothing else: the real targets take half an hour, which .ci/run itself spends."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from bringup_support import REPO

# Logs "start <arguments>|<niceness>|<I/O class>|<pid>|<session id>|<autogroup>" and "end
# <arguments>" per call. FAIL names the calls that exit 1. HOLD is the call that waits until
# killed, in a child process ("child <pid>"). The call AWAIT_IN waits (at most 60 s) until the
# call AWAIT_FOR has started, and logs "saw <AWAIT_FOR> start" if it did.
FAKE_MAKE = r"""#!/usr/bin/env bash
call="$*"
stat=$(cut -d' ' -f6,19 /proc/$$/stat)  # session id, niceness
echo "start $call|${stat#* }|$(ionice -p $$ 2>/dev/null)|$$|${stat% *}|$(cat /proc/$$/autogroup \
  2>/dev/null)" >> "$CALLS"
echo "output of $call"
if [ "$call" = "${HOLD:-}" ]; then
  sleep 600 &
  echo "child $!" >> "$CALLS"
  wait
fi
if [ "$call" = "${AWAIT_IN:-}" ]; then
  for _ in $(seq 600); do
    grep -q "^start $AWAIT_FOR|" "$CALLS" && { echo "saw $AWAIT_FOR start" >> "$CALLS"; break; }
    sleep 0.1
  done
fi
echo "end $call" >> "$CALLS"
case ",${FAIL:-}," in *",$call,"*) exit 1 ;; esac
exit 0
"""
JAZZY_SETUP = '--no-print-directory setup DISTRO=jazzy'
JAZZY_TESTS = '--no-print-directory test-all DISTRO=jazzy'
KILTED_SETUP = '--no-print-directory setup DISTRO=kilted'
KILTED_TESTS = '--no-print-directory test DISTRO=kilted'


def ci_copy(tmp_path: Path, **env: str) -> tuple[list[str], dict[str, str], Path]:
    """The command running a copy of tools/ci.sh in ``tmp_path``, its environment (the fake
    make first on PATH, ``env`` added) and the file the calls are logged to."""
    (tmp_path / 'tools').mkdir()
    script = tmp_path / 'tools' / 'ci.sh'
    script.write_text((REPO / 'tools' / 'ci.sh').read_text())
    bin_folder = tmp_path / 'bin'
    bin_folder.mkdir()
    make = bin_folder / 'make'
    make.write_text(FAKE_MAKE)
    make.chmod(0o755)
    calls = tmp_path / 'calls.txt'
    environment = {**os.environ, 'PATH': f'{bin_folder}{os.pathsep}{os.environ["PATH"]}',
                   'CALLS': str(calls), **env}
    return ['bash', str(script)], environment, calls


def logged(calls: Path) -> list[str]:
    return calls.read_text().splitlines() if calls.exists() else []


def started(calls: Path) -> dict[str, list[str]]:
    """Arguments -> [niceness, I/O class, pid, session id, autogroup] of every call that
    started (autogroup: as /proc/PID/autogroup says, empty where the kernel has none)."""
    return {line[6:].split('|')[0]: line.split('|')[1:] for line in logged(calls)
            if line.startswith('start ')}


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (an ended one not yet reaped counts as ended)."""
    try:
        return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def test_kilted_is_set_up_beside_jazzys_tests_at_the_lowest_priority(tmp_path):
    command, env, calls = ci_copy(tmp_path, AWAIT_IN=JAZZY_TESTS, AWAIT_FOR=KILTED_SETUP)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    events = [line.split('|')[0] for line in logged(calls)]  # "start ARGUMENTS", "end ..."
    assert events.index(f'end {JAZZY_SETUP}') < events.index(f'start {KILTED_SETUP}')
    assert f'saw {KILTED_SETUP} start' in events  # while Jazzy's tests ran
    assert events.index(f'end {KILTED_SETUP}') < events.index(f'start {KILTED_TESTS}')
    assert events.index(f'end {JAZZY_TESTS}') < events.index(f'start {KILTED_TESTS}')
    calls_started = started(calls)
    niceness, io_class, _, session, autogroup = calls_started[KILTED_SETUP]
    assert (niceness, io_class) == ('19', 'idle')
    # In a session of its own, which Linux's scheduler (with autogroups) shares the CPU with
    # as a whole: the session's niceness is the lowest too.
    assert session != calls_started[JAZZY_TESTS][3]
    assert autogroup == '' or autogroup.endswith(' nice 19'), autogroup
    for call in (JAZZY_SETUP, JAZZY_TESTS, KILTED_TESTS):  # the tests at the caller's
        assert calls_started[call][0] == str(os.nice(0)), (call, calls_started[call])
    # The set-up's output is shown, once, before Kilted's tests
    assert result.stdout.count(f'output of {KILTED_SETUP}') == 1
    assert result.stdout.index(f'output of {KILTED_SETUP}') < result.stdout.index(
        f'output of {KILTED_TESTS}')


@pytest.mark.parametrize('failing', [JAZZY_TESTS, KILTED_TESTS])
def test_both_legs_run_and_either_failing_fails_the_run(tmp_path, failing):
    command, env, calls = ci_copy(tmp_path, FAIL=failing)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert {JAZZY_TESTS, KILTED_TESTS} <= set(started(calls))
    jazzy, kilted = ('1', '0') if failing == JAZZY_TESTS else ('0', '1')
    assert (f'Jazzy, every test: exit {jazzy}; Kilted, quick tier: exit {kilted}'
            in result.stdout)


def test_the_stacks_of_a_test_over_its_time_limit_are_printed_again_last(tmp_path):
    # as tools/run_tests.sh leaves them (wheelsim/testing/time_limit.py)
    results = tmp_path / 'build' / 'jazzy' / 'test-results'
    results.mkdir(parents=True)
    dump = 'test/nav2/test_x.py::test_y (teardown)\nTimeout (0:15:00)!\n'
    (results / 'hung-test-7.txt').write_text(dump)
    (results / 'hung-test-8.txt').write_text('test/test_z.py::test_z (call)\n')  # crashed
    command, env, _ = ci_copy(tmp_path, FAIL=JAZZY_TESTS)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[-4:] == [
        'CI: a test ran over its time limit (build/jazzy/test-results/hung-test-7.txt):',
        *dump.splitlines(), 'CI: Jazzy, every test: exit 1; Kilted, quick tier: exit 0'], lines


@pytest.mark.parametrize('failing', [JAZZY_SETUP, KILTED_SETUP])
def test_a_failed_set_up_fails_the_run_naming_it(tmp_path, failing):
    command, env, calls = ci_copy(tmp_path, FAIL=failing)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    distro = 'Jazzy' if failing == JAZZY_SETUP else 'Kilted'
    assert f"CI: {distro}'s set-up failed" in result.stdout
    assert f'output of {failing}' in result.stdout
    assert KILTED_TESTS not in started(calls)


def test_ctrl_c_ends_the_set_up_running_beside_the_tests(tmp_path):
    command, env, calls = ci_copy(tmp_path, HOLD=KILTED_SETUP)
    ci = subprocess.Popen(  # a terminal's Ctrl-C: SIGINT to the foreground process group
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    held = []  # the set-up's make (its session's leader) and the child it waits for
    try:
        deadline = time.monotonic() + 60
        while len(held) < 2 and time.monotonic() < deadline:
            lines = logged(calls)
            held = [int(started(calls)[KILTED_SETUP][2])] if KILTED_SETUP in started(calls) \
                else []
            held += [int(line.split()[1]) for line in lines if line.startswith('child ')]
            time.sleep(0.05)
        assert len(held) == 2 and all(alive(pid) for pid in held), logged(calls)
        os.killpg(ci.pid, signal.SIGINT)
        assert ci.wait(timeout=30) != 0
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in held) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in held if alive(pid)], 'the set-up outlived Ctrl-C'
    finally:
        for group in (ci.pid, *held[:1]):  # whatever a failure above left running
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        ci.wait(timeout=30)
