"""Prepare the compiled kernels the nodes call, once: ``python -m wheelsim.core.warm_up``.

``make setup`` and the Docker image run this after installing, so that no node, demo or test
compiles while it runs; it prints each part as it starts. It calls every kernel the nodes call,
with the argument types they call them with: the vehicle's stepping kernels (one vehicle, a
replay and a parallel batch of every model), the localization's per-sample kernel, the control
step's kernels, and the world's ray-casting and collision kernels (a scan and a collision in a
small map). numba compiles each at its first call and keeps the machine code on disk
(``cache=True``); then the kernels called are compiled ahead of time into a module that
processes load without numba (:mod:`wheelsim.core.ahead_of_time`). Compiling is
single-threaded, so the command prepares its two groups of parts in two processes, one module
each: 35-40 s on a 2-core machine the first time, 1-2 s after.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from wheelsim.core.ahead_of_time import prepare
from wheelsim.core.localization.step_kernel import load_kernel
from wheelsim.core.tracking.warm_up import warm_up as warm_up_control_step
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import PARALLEL_FROM_VEHICLE_STEPS, Vehicle, VehicleBatch
from wheelsim.core.world.config import ScanSettings
from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.guard import CollisionGuard
from wheelsim.core.world.occupancy import OccupancyMap
from wheelsim.core.world.scanner import LaserScanner

MODELS = ('bicycle', 'differential', 'omni')
WORLD_CELLS = 40  # the warm-up map: 40 x 40 cells of 5 cm, a wall across it 0.5 m ahead
WORLD_RESOLUTION_M = 0.05
WALL_COLUMN = 30


def warm_up_world() -> None:
    """A scan, and a vehicle driven into a wall until it touches and backs off (contact,
    clearance), in a small map built as the nodes build theirs."""
    values = np.zeros((WORLD_CELLS, WORLD_CELLS), np.int8)
    values[:, WALL_COLUMN] = 100
    half_m = WORLD_CELLS * WORLD_RESOLUTION_M / 2
    world = OccupancyMap.from_values(values.reshape(-1), WORLD_CELLS, WORLD_CELLS,
                                     WORLD_RESOLUTION_M, (-half_m, -half_m, 0.0))
    LaserScanner(ScanSettings(), np.random.default_rng(0)).scan(world, (0.0, 0.0, 0.0))
    config = vehicle_config_from_params({'model': 'differential'})
    vehicle = Vehicle(config, 0.001)
    guard = CollisionGuard(world, Footprint.around_wheels(config))
    vehicle.set_command(0.5, 0.0, 0.0)
    for _ in range(40):  # 2 s towards the wall 0.5 m ahead
        guard.step(vehicle, 50)
    vehicle.set_command(-0.5, 0.0, 0.0)
    for _ in range(20):
        guard.step(vehicle, 50)


def warm_up_vehicle(model: str, parallel: bool = True) -> None:
    """One step of one vehicle of ``model``, a replay (calibration's) and, if ``parallel``, a
    step of a batch (the parallel kernel)."""
    config = vehicle_config_from_params({'model': model})
    Vehicle(config, 0.001).step(1)
    if parallel:
        VehicleBatch([config] * 2, 0.001).step(PARALLEL_FROM_VEHICLE_STEPS // 2)
    VehicleBatch([config] * 2, 0.001).replay([1], [(0.0, 0.0, 0.0)], [1], [0])


Part = tuple[str, Callable[[], None]]  # what it is, the call that loads it

#: What :func:`warm_up` loads, in two groups that share no kernel, each loaded in order: the
#: vehicles, then the world (which drives a vehicle); the localization and the control step.
GROUPS: tuple[tuple[Part, ...], ...] = (
    (*((f'the {model} vehicle', partial(warm_up_vehicle, model)) for model in MODELS),
     ('the world', warm_up_world)),
    (('the localization', load_kernel), ('the control step', warm_up_control_step)),
)
PARTS: tuple[Part, ...] = tuple(part for group in GROUPS for part in group)


def _load(group: int, progress: Callable[[int, int, str], None] | None) -> None:
    """Load the parts of ``GROUPS[group]`` and compile what they call ahead of time."""
    first_index = 1 + sum(len(parts) for parts in GROUPS[:group])

    def load_parts() -> None:
        for index, (what, load) in enumerate(GROUPS[group], first_index):
            if progress is not None:
                progress(index, len(PARTS), what)
            load()

    prepare(f'core{group}', load_parts)


def warm_up(progress: Callable[[int, int, str], None] | None = None,
            parallel: bool = False) -> None:
    """Load every part of :data:`PARTS` and compile the kernels they call ahead of time, a
    module per group; ``progress(index, count, what)`` is called before each part (index from
    1, its place in :data:`PARTS`). ``parallel``: the second group in a forked process at the
    same time as the first (forked before any kernel runs, so no threading layer is running
    yet); raises ``RuntimeError`` when that process fails."""
    if not parallel:
        for group in range(len(GROUPS)):
            _load(group, progress)
        return
    second = multiprocessing.get_context('fork').Process(target=_load, args=(1, progress))
    second.start()
    try:
        _load(0, progress)
    finally:
        second.join()
    if second.exitcode != 0:
        raise RuntimeError(f'loading {", ".join(what for what, _ in GROUPS[1])} failed '
                           f'(exit code {second.exitcode})')


def _print_progress(index: int, count: int, what: str) -> None:
    # One write per line: two processes print, and with PYTHONUNBUFFERED print() writes the
    # text and its newline apart, so the lines of the two interleaved mid-line.
    sys.stdout.write(f'wheelsim: loading the compiled kernels {index}/{count}: {what}\n')
    sys.stdout.flush()


if __name__ == '__main__':
    start_s = time.perf_counter()
    warm_up(_print_progress, parallel=True)
    print('wheelsim: compiled kernels loaded for ' + ', '.join(MODELS)
          + f', the localization, the control step and the world '
          f'({time.perf_counter() - start_s:.1f} s)')
