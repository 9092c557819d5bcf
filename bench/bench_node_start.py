"""Start-up of each node process, as its executable starts it, side by side with a baseline.

Run after ``source env.sh``:  python bench/bench_node_start.py [--runs 5] [--baseline REV]

Each run starts ``python -m wheelsim.nodes NAME`` (what ``ros2 run wheelsim NAME`` runs) with
its default parameters on a loopback ROS domain of its own, waits for the node's first log line
(written at the end of its constructor: the node is built), sends SIGINT and waits for the end.
Per node, the median and the best of the runs:

- ``ready``: wall seconds and CPU seconds (user + system, every thread) from the process start
  to that first line: what a launch file, a test or a user waits for;
- ``whole``: CPU seconds of the whole process, start to exit (``wait4``).

Then numba's share of a start: the CPU seconds of ``import numba`` in a process that has
imported numpy and rclpy already, and of the first call of a compiled function whose machine
code is in the kernel cache (numba builds its typing and target contexts then), its module
imported before. Every node pays both; the goal of issue 34 (a headless run's whole command
within 1.0 s of CPU) cannot be met while they are paid.

``--baseline REV`` also starts the nodes of git revision REV (its ``src/wheelsim/wheelsim``
exported first on ``PYTHONPATH``, set up as set-up sets up the working tree's: bytecode
compiled, kernel warm-ups run; one start of each node and of the numba measurement are not
counted), alternating with the working tree's start by start.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_runner import alternated, baseline_tree, set_up_baseline, variant_codes

from wheelsim.ros.dds_domain import loopback_domain
from wheelsim.testing.process_activity import cpu_s

NODES = ('vehicle_sim', 'localization', 'planner', 'controller')
READY_TIMEOUT_S = 120.0  # a cold kernel cache compiles for a minute on a busy machine
STOP_TIMEOUT_S = 30.0
NUMBA_SHARE = """
import time
import numpy, rclpy
start = time.process_time()
import numba
imported = time.process_time()
from wheelsim.core.vehicle.kinematics import differential_wheel_speeds
called = time.process_time()
differential_wheel_speeds(0.5, 0.1, 0.25, 1.0)
print(imported - start, time.process_time() - called)
"""


def start_once(name: str, code: Path | None) -> dict:
    """Start node ``name`` (with the package in ``code`` first on the path if given), wait for
    its first log line, stop it; its figures."""
    env = dict(os.environ)
    if code is not None:
        env['PYTHONPATH'] = os.pathsep.join([str(code), env.get('PYTHONPATH', '')])
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, '-m', 'wheelsim.nodes', name], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        output, tag = b'', f'[{name}]'.encode()
        while tag not in output:
            chunk = read_within(process, started + READY_TIMEOUT_S)
            if not chunk:
                sys.exit(f'{name} printed no line of its own within {READY_TIMEOUT_S:g} s or '
                         f'ended:\n{output.decode(errors="replace")}')
            output += chunk
        ready_wall_s, ready_cpu_s = time.monotonic() - started, cpu_s(process.pid)
        os.kill(process.pid, signal.SIGINT)
        stop_by = time.monotonic() + STOP_TIMEOUT_S
        while read_within(process, stop_by):  # drained to its end, so it never blocks writing
            pass
    finally:
        os.kill(process.pid, signal.SIGKILL)  # nothing if it has ended (a zombie until wait4)
        _, _, usage = os.wait4(process.pid, 0)
        process.returncode = 0  # reaped here: Popen must not wait for it again
        process.stdout.close()
    return {'ready_wall_s': ready_wall_s, 'ready_cpu_s': ready_cpu_s,
            'whole_cpu_s': usage.ru_utime + usage.ru_stime}


def read_within(process: subprocess.Popen, deadline: float) -> bytes:
    """What ``process`` printed next, waiting until the monotonic time ``deadline``; empty at
    its end, or when the deadline passed (then the process is killed). Signals go by ``os.kill``:
    Popen's own would reap an ended process and lose its resource usage to ``wait4``."""
    ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
    if not ready:
        os.kill(process.pid, signal.SIGKILL)
        return b''
    return os.read(process.stdout.fileno(), 65536)


def numba_share(code: Path | None) -> tuple[float, float]:
    """CPU seconds of ``import numba`` and of the first call of a cached compiled function."""
    env = dict(os.environ)
    if code is not None:
        env['PYTHONPATH'] = os.pathsep.join([str(code), env.get('PYTHONPATH', '')])
    result = subprocess.run([sys.executable, '-c', NUMBA_SHARE], env=env, check=True,
                            capture_output=True, text=True)
    imported, first_call = map(float, result.stdout.split())
    return imported, first_call


def set_up_baseline_nodes(code: Path) -> None:
    """The baseline in ``code`` set up as set-up sets up the working tree's, then each node
    started once (uncounted), which fills its kernel cache where set-up did not."""
    set_up_baseline(code)
    for name in NODES:
        start_once(name, code)


def median_best(values: list[float]) -> str:
    return f'{statistics.median(values):5.2f} ({min(values):.2f})'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--baseline', metavar='REV')
    args = parser.parse_args()
    with loopback_domain(), baseline_tree(args.baseline) as old_code:
        if old_code is not None:
            set_up_baseline_nodes(old_code)
            numba_share(old_code)
        variants = variant_codes(args.baseline, old_code)
        results = {name: alternated(variants, args.runs, lambda code, n=name: start_once(n, code))
                   for name in NODES}
        shares = alternated(variants, args.runs, numba_share)
    print(f'Node start, {args.runs} runs each, load average {os.getloadavg()[0]:.2f}; '
          'median (best), seconds')
    print(f'{"node":13s}{"variant":28s}{"ready: wall":>14s}{"ready: CPU":>14s}'
          f'{"whole: CPU":>14s}')
    for name, per_variant in results.items():
        for variant, runs in per_variant.items():
            print(f'{name:13s}{variant:28s}'
                  + ''.join(f'{median_best([run[key] for run in runs]):>14s}'
                            for key in ('ready_wall_s', 'ready_cpu_s', 'whole_cpu_s')))
    for variant, runs in shares.items():
        print(f'numba in every node ({variant}): import {median_best([r[0] for r in runs])} s '
              f'CPU, first call of a cached kernel {median_best([r[1] for r in runs])} s CPU')


if __name__ == '__main__':
    main()
