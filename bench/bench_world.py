"""World figures: scan CPU share, collision check cost per step, lock-step RTF with the scan.

Run after ``source env.sh``:  python bench/bench_world.py [--seconds 20] [--windows 3] [--runs 3]

1. Scan CPU share of one core at 360 beams and 10 Hz on a 500 x 500 map (25 m x 25 m at 5 cm:
   border walls and 80 boxes of 0.2-1 m, seed 0; 12 m range, 1 cm noise). Goal: at most 1 % of a
   core beside the vehicle.
   a. The core alone: ``LaserScanner.scan`` from 200 poses spread over the free cells, best of
      3 passes: time per scan and its share at 10 scans a second.
   b. The node: vehicle_sim (differential, wall clock, 1000/50 Hz, the same map as
      ``world.map_yaml``, standing still) with ``scan.enabled`` true and false, each alone, in
      turn, ``--windows`` times, its CPU time read from /proc; median and range, and the
      difference of the medians (what the scan adds, with publishing the LaserScan and the
      footprint). This virtual machine's speed drifts: compare figures of one run.
2. Collision check cost per step, guard on vs off side by side: a differential vehicle at
   1 kHz driving at 0.5 m/s in a 25 m x 25 m walled room, stepped by ``Vehicle.step`` (no
   world) and by ``CollisionGuard.step`` (world.collisions true) in the open (the centre) and
   along a wall at 0.15 m clearance (sub-batches of half a cell), in batches of 20 steps as
   vehicle_sim takes them at 50 Hz publishing and of 1 step; microseconds per step, best of 5.
3. Lock-step real-time factor of ``wheelsim run``'s default scenario without a map and with the
   shipped room map (``map: room``: the scan at 10 Hz recorded in the bag, footprint, collision
   guard), runs alternating in one process, ``--runs`` each; RTF per wall second and per CPU
   second of the loop (best and median), the bag's scan count and the collisions.

The load average is printed with the figures; run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_vehicle_sim import cpu_shares, median_and_range

from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.core.world.config import ScanSettings
from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.guard import CollisionGuard
from wheelsim.core.world.map_file import load_map_file
from wheelsim.core.world.scanner import LaserScanner
from wheelsim.ros.dds_domain import loopback_domain
from wheelsim.testing.maps import walled_room, write_map
from wheelsim.testing.processes import NodeProcess, Probe

RESOLUTION_M = 0.05
MAP_CELLS = 500
SCAN_RATE_HZ = 10.0
BOX = [-0.3, -0.3, 0.3, -0.3, 0.3, 0.3, -0.3, 0.3]
DIFFERENTIAL = {'model': 'differential', 'model_params.differential.track': 0.5}


def bench_obstacles(seed: int = 0) -> np.ndarray:
    """The 500 x 500 benchmark map: border walls and 80 boxes, the centre 4 m x 4 m kept free."""
    obstacles = walled_room(MAP_CELLS * RESOLUTION_M, MAP_CELLS * RESOLUTION_M, RESOLUTION_M)
    rng = np.random.default_rng(seed)
    centre = MAP_CELLS // 2
    for _ in range(80):
        w, h = rng.integers(4, 21, size=2)
        r, c = rng.integers(1, MAP_CELLS - 21, size=2)
        if abs(r + h / 2 - centre) < 50 and abs(c + w / 2 - centre) < 50:
            continue
        obstacles[r:r + h, c:c + w] = True
    return obstacles


def best_seconds(action: Callable[[], None], repeats: int) -> float:
    best = float('inf')
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def scan_core(world) -> float:
    """Figure 1a: seconds per scan of 360 beams, best of 3 passes over 200 free poses."""
    scanner = LaserScanner(ScanSettings(), np.random.default_rng(0))
    rng = np.random.default_rng(1)
    free = np.argwhere(~world.obstacles)
    picks = free[rng.choice(len(free), 200, replace=False)]
    poses = [(*world.cell_center(int(r), int(c)), float(rng.uniform(-np.pi, np.pi)))
             for r, c in picks]
    scanner.scan(world, poses[0])  # compile

    def every_pose():
        for pose in poses:
            scanner.scan(world, pose)

    return best_seconds(every_pose, 3) / len(poses)


def node_shares(map_yaml: Path, seconds: float, windows: int) -> dict[bool, list[float]]:
    """Figure 1b: vehicle_sim's CPU share with the scan on and off, in turn."""
    shares: dict[bool, list[float]] = {True: [], False: []}
    with loopback_domain():
        probe = Probe('bench_world')
        try:
            for _ in range(windows):
                for enabled in (True, False):
                    params = {**DIFFERENTIAL, 'world.map_yaml': str(map_yaml),
                              'scan.enabled': enabled, 'initial_pose.x': 0.0}
                    with NodeProcess('wheelsim.nodes.vehicle_sim', params,
                                     namespace='/bench') as node:
                        probe.spin_until(
                            lambda: probe.node.count_publishers('/bench/ground_truth') > 0, 30.0)
                        probe.spin_for(3.0)
                        shares[enabled].append(cpu_shares([node.process.pid], probe, seconds)[0])
        finally:
            probe.close()
    return shares


def guard_costs(world) -> dict[str, float]:
    """Figure 2: microseconds per step, {case: cost}, in ``world`` (a walled room)."""
    config = vehicle_config_from_params(DIFFERENTIAL)
    footprint = Footprint.from_flat(BOX)
    guard = CollisionGuard(world, footprint)
    steps = 10_000
    # the open: the centre of the map; along a wall: 0.15 m from the south wall
    starts = {'open': (0.0, 0.0, 0.0),
              'wall': (-10.0, world.origin[1] + RESOLUTION_M + 0.3 + 0.15, 0.0)}
    costs = {}
    for place, start in starts.items():
        for batch in (20, 1):
            for kind in ('off', 'on'):
                def drive(kind=kind, batch=batch, start=start):
                    vehicle = Vehicle(config, 0.001, start)
                    vehicle.set_command(0.5, 0.0, 0.0)
                    for _ in range(steps // batch):
                        if kind == 'on':
                            guard.step(vehicle, batch)
                        else:
                            vehicle.step(batch)

                drive()  # compile
                costs[f'{place} {batch} {kind}'] = best_seconds(drive, 5) / steps * 1e6
    return costs


def lockstep_runs(runs: int) -> dict[str, list[dict]]:
    """Figure 3: loop (cpu, wall), simulated time, scans and collisions of each run."""
    from mcap.reader import make_reader

    from wheelsim.cli import _load
    from wheelsim.run.runner import run_scenario
    from wheelsim.shipped import shipped_map

    default, _ = _load(None)
    variants = {'no map': default,
                'room': dataclasses.replace(default, name='default_room',
                                            map_yaml=shipped_map('room'))}
    results: dict[str, list[dict]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory(prefix='bench_world_') as tmp:
        for _ in range(runs):
            for name, scenario in variants.items():
                outcome = run_scenario(scenario, Path(tmp), show_progress=False,
                                       make_plots=False, overwrite=True)
                [bag] = outcome.output_dir.rglob('*.mcap')
                with open(bag, 'rb') as stream:
                    summary = make_reader(stream).get_summary()
                topics = {c.id: c.topic for c in summary.channels.values()}
                counts = summary.statistics.channel_message_counts
                results[name].append({
                    'loop': outcome.phases.seconds['loop'],
                    'simulated_s': outcome.timing['simulated_time_s'],
                    'scans': sum(n for c, n in counts.items() if topics[c] == '/scan'),
                    'collisions': outcome.metrics.get('collisions')})
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=20.0, help='length of each node window')
    parser.add_argument('--windows', type=int, default=3, help='node windows per scan setting')
    parser.add_argument('--runs', type=int, default=3, help='lock-step runs per variant')
    args = parser.parse_args()
    print(f'load average {os.getloadavg()[0]:.1f} at the start ({os.cpu_count()} CPUs)')
    with tempfile.TemporaryDirectory(prefix='bench_world_map_') as tmp:
        half = MAP_CELLS * RESOLUTION_M / 2
        map_yaml = write_map(Path(tmp), bench_obstacles(), RESOLUTION_M, (-half, -half, 0.0))
        world = load_map_file(str(map_yaml)).occupancy_map()
        per_scan_s = scan_core(world)
        print(f'1a. core: {per_scan_s * 1e3:.3f} ms per scan of 360 beams on '
              f'{MAP_CELLS} x {MAP_CELLS} cells; at {SCAN_RATE_HZ:g} Hz '
              f'{per_scan_s * SCAN_RATE_HZ * 100:.2f} % of a core (goal <= 1 %)')
        shares = node_shares(map_yaml, args.seconds, args.windows)
        print(f'1b. vehicle_sim, wall clock 1000/50 Hz, {args.windows} windows of '
              f'{args.seconds:g} s: scan on {median_and_range(shares[True])}, scan off '
              f'{median_and_range(shares[False])}; the scan adds '
              f'{100 * (statistics.median(shares[True]) - statistics.median(shares[False])):.2f}'
              ' % of a core')
        room = write_map(Path(tmp), walled_room(MAP_CELLS * RESOLUTION_M,
                                                MAP_CELLS * RESOLUTION_M, RESOLUTION_M),
                         RESOLUTION_M, (-half, -half, 0.0), name='room')
        costs = guard_costs(load_map_file(str(room)).occupancy_map())
    print('2.  collision check, microseconds per step (differential, 1 kHz, 0.5 m/s):')
    print('    where           batch   guard off   guard on   added')
    for place, label in (('open', 'open'), ('wall', 'wall 0.15 m')):
        for batch in (20, 1):
            off, on = costs[f'{place} {batch} off'], costs[f'{place} {batch} on']
            print(f'    {label:15s} {batch:5d} {off:11.2f} {on:10.2f} {on - off:7.2f}')
    results = lockstep_runs(args.runs)
    print(f'3.  lock-step default scenario, {args.runs} runs each, alternating:')
    for name, runs in results.items():
        simulated = runs[0]['simulated_s']
        cpu = [r['loop'][0] for r in runs]
        wall = [r['loop'][1] for r in runs]
        print(f'    {name:8s} RTF wall best {simulated / min(wall):6.1f}x median '
              f'{simulated / statistics.median(wall):6.1f}x | RTF cpu best '
              f'{simulated / min(cpu):6.1f}x median {simulated / statistics.median(cpu):6.1f}x'
              f' | scans in bag {runs[0]["scans"]}, collisions {runs[0]["collisions"]}')
    print(f'load average {os.getloadavg()[0]:.1f} at the end')


if __name__ == '__main__':
    main()
