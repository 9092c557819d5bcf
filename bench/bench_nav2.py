"""Stock Nav2 on wheelsim, faster than real time: the goal sequence of the Nav2 tests at each
real-time factor, with Nav2's servers composed and as separate processes.

    source env.sh && source tools/nav2_env.sh
    python bench/bench_nav2.py                          # factors 1 2 4 8, both compositions
    python bench/bench_nav2.py --factors 4 --composition True

Per run (a fresh nav2_bringup.launch.py, indoor_differential preset, AMCL): wall seconds from
the launch to every lifecycle node active; per goal, success, simulated seconds and the path
driven against the straight line; the footprint's minimum clearance; AMCL's error at the end;
the problem lines the tests reject; the Ctrl-C (seconds until the launch ended); and, with
separate processes, each Nav2 server's CPU over the goal sequence (per cent of one core). The
controller is stock MPPI unless this Nav2's MPPI is a known miscompiled build, then Nav2's
graceful controller (said in the output). At the end the whole command's wall and CPU time.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from wheelsim.bringup.nav2_mppi import mppi_problem
from wheelsim.bringup.nav2_stock import merge_overrides
from wheelsim.ros.dds_domain import loopback_domain
from wheelsim.testing.nav2 import Goal, Nav2Stack, min_clearance_m, nav2_problem
from wheelsim.testing.process_activity import cpu_s
from wheelsim.testing.sockets import descendants

REPO = Path(__file__).resolve().parents[1]
ROOM = REPO / 'params' / 'maps' / 'room.yaml'
FOOTPRINT = [-0.2, -0.3, 0.3, -0.3, 0.3, 0.3, -0.2, 0.3]  # params/indoor_differential.yaml
GOALS = (Goal(4.0, 2.0, 0.0), Goal(1.0, -4.5, math.pi), Goal(-3.0, 3.0, math.pi / 2),
         Goal(0.0, 0.0, 0.0))
PROBLEM_WORDS = ('extrapolation', 'Message Filter dropping', 'Transform data too old',
                 'incompatible QoS', 'Failed to get', 'missed its desired rate')


def process_name(pid: int) -> str:
    parts = Path(f'/proc/{pid}/cmdline').read_text().split('\0')
    for part in parts:
        if '/' in part and 'python' not in os.path.basename(part):
            return os.path.basename(part)
    return os.path.basename(parts[0])


def one_run(folder: Path, factor: float, composition: str, overrides: list[str]) -> None:
    arguments = ['preset:=indoor_differential', 'localization:=amcl',
                 f'use_composition:={composition}', f'real_time_factor:={factor:g}', *overrides]
    with Nav2Stack(folder, *arguments) as stack:
        amcl = stack.record_amcl_poses()
        active_s = stack.wait_until_active()
        active_at = len(stack.output())
        pids = descendants(stack.process.pid) - {stack.process.pid}
        before = {pid: cpu_s(pid) for pid in pids}
        wall_start = time.monotonic()
        outcomes = [stack.navigate(goal, timeout_s=600.0 / factor) for goal in GOALS]
        wall_s = time.monotonic() - wall_start
        used = {process_name(pid): cpu_s(pid) - before[pid] for pid in pids
                if Path(f'/proc/{pid}').exists()}
        output = stack.output()[active_at:].partition('user interrupted with ctrl-c')[0]
        code, stop_s, left = stack.stop()
    succeeded = sum(o.succeeded for o in outcomes)
    sim_s = sum(o.truth[-1, 0] - o.truth[0, 0] for o in outcomes if len(o.truth))
    truth = np.vstack([o.truth for o in outcomes])
    print(f'\n### {factor:g}x, use_composition {composition}: {succeeded}/{len(GOALS)} goals, '
          f'{sim_s:.1f} s simulated in {wall_s:.1f} s wall (achieved {sim_s / wall_s:.2f}x)')
    print(f'- launch to all active: {active_s:.1f} s wall; Ctrl-C to the end of the launch: '
          f'{stop_s:.1f} s (exit {code}), processes left: {len(left)}')
    for o in outcomes:
        print(f'- goal ({o.goal.x_m:g}, {o.goal.y_m:g}, {o.goal.yaw_rad:.2f}): '
              f'{"reached" if o.succeeded else "FAILED"} in {o.truth[-1, 0] - o.truth[0, 0]:.1f} '
              f's simulated, {o.path_length_m:.2f} m driven for {o.straight_line_m:.2f} m '
              f'straight ({o.path_length_m / max(o.straight_line_m, 1e-9):.2f}), final error '
              f'{o.position_error_m:.3f} m')
    print(f'- minimum clearance {min_clearance_m(ROOM, FOOTPRINT, truth):.3f} m')
    if amcl:
        estimate = amcl[-1]
        when_s = estimate.header.stamp.sec + estimate.header.stamp.nanosec * 1e-9
        row = truth[np.argmin(np.abs(truth[:, 0] - when_s))]
        error_m = math.hypot(estimate.pose.pose.position.x - row[1],
                             estimate.pose.pose.position.y - row[2])
        print(f'- AMCL position error at the end: {error_m:.3f} m')
    counts = {word: output.count(word) for word in PROBLEM_WORDS}
    print('- log lines while navigating: ' + ', '.join(f'{w!r} {n}' for w, n in counts.items()))
    if composition == 'False':
        print('- CPU over the goal sequence, per cent of one core: ' + ', '.join(
            f'{name} {100 * s / wall_s:.0f}'
            for name, s in sorted(used.items(), key=lambda item: -item[1])))
    else:
        total = sum(used.values())
        print(f'- CPU over the goal sequence: {100 * total / wall_s:.0f} % of one core in all')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--factors', type=float, nargs='+', default=[1.0, 2.0, 4.0, 8.0])
    parser.add_argument('--composition', nargs='+', default=['True', 'False'],
                        choices=['True', 'False'])
    args = parser.parse_args()
    if problem := nav2_problem():
        print(f'bench_nav2: {problem}', file=sys.stderr)
        return 2
    started = time.monotonic()
    overrides = []
    controller = 'MPPI (stock)'
    if problem := mppi_problem():
        controller = f'graceful (MPPI not usable: {problem})'
        distro = os.environ.get('ROS_DISTRO') or os.environ.get('WHEELSIM_DISTRO', 'jazzy')
        stock = yaml.safe_load((REPO / 'params' / 'nav2' / f'stock_{distro}.yaml').read_text())
        graceful = {'controller_server': {'ros__parameters': {
            'FollowPath': {'plugin': 'nav2_graceful_controller::GracefulController'}}}}
        path = Path(tempfile.mkdtemp(prefix='bench-nav2-')) / 'overrides.yaml'
        path.write_text(yaml.safe_dump(merge_overrides(stock, graceful)))
        overrides = [f'nav2_overrides_file:={path}']
    print(f'controller: {controller}; machine: {os.cpu_count()} CPUs, load '
          f'{os.getloadavg()[0]:.2f}')
    with loopback_domain():
        for composition in args.composition:
            for factor in args.factors:
                one_run(Path(tempfile.mkdtemp(prefix='bench-nav2-')), factor, composition,
                        overrides)
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    print(f'\nwhole command: {time.monotonic() - started:.0f} s wall, {cpu:.0f} s CPU (this '
          'process and the launches it waited for)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
