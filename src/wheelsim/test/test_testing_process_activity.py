"""wheelsim.testing.process_activity: what the processes of a stalled stack are doing."""

from __future__ import annotations

import subprocess
import sys
import time

from wheelsim.testing.process_activity import activity, cpu_s

BUSY = 'while True: pass'


def test_a_busy_a_sleeping_and_an_ended_process_are_told_apart():
    sleeping = subprocess.Popen(['sleep', '60'])
    busy = subprocess.Popen([sys.executable, '-c', BUSY])
    ended = subprocess.Popen(['true'])
    ended.wait()
    try:
        deadline = time.monotonic() + 60.0
        while cpu_s(busy.pid) < 0.05:  # it runs (however busy the machine is)
            assert time.monotonic() < deadline, 'the busy process got no CPU in 60 s'
            time.sleep(0.01)
        lines = activity([busy.pid, sleeping.pid, ended.pid], interval_s=0.5)
    finally:
        busy.kill()
        sleeping.kill()
        busy.wait()
        sleeping.wait()
    first, second, third = sorted([busy.pid, sleeping.pid, ended.pid])
    by_pid = dict(zip((first, second, third), lines, strict=True))
    assert by_pid[sleeping.pid] == (f'{sleeping.pid} S cpu 0.00 s in 0.5 s, threads: 1 S: '
                                    'sleep 60')
    assert by_pid[ended.pid] == f'{ended.pid} ended'
    line = by_pid[busy.pid]  # runnable all the time: R, whether on a CPU or waiting for one
    assert line.startswith(f'{busy.pid} R cpu '), line
    assert line.endswith(f' s in 0.5 s, threads: 1 R: {sys.executable} -c {BUSY}'), line
    assert float(line.split(' cpu ')[1].split(' s ')[0]) > 0.0, line


def test_cpu_s_grows_with_the_work_done():
    busy = subprocess.Popen([sys.executable, '-c', BUSY])
    try:
        start_s = cpu_s(busy.pid)
        deadline = time.monotonic() + 60.0
        while cpu_s(busy.pid) < start_s + 0.1:
            assert time.monotonic() < deadline, 'no CPU time counted in 60 s'
            time.sleep(0.01)
    finally:
        busy.kill()
        busy.wait()
