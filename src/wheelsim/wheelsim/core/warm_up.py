"""Load the compiled kernels the nodes call once: ``python -m wheelsim.core.warm_up``.

numba compiles a kernel at its first call and keeps the machine code on disk (``cache=True``);
``make setup`` and the Docker image run this after installing, so that no node, demo or test
compiles while it runs; it prints each part as it starts (compiling all of them takes 25-40 s
on a 2-core machine the first time, loading them under a second after). The parts: the
vehicle's stepping kernels (one vehicle and a parallel batch of every model), the
localization's per-sample kernel, the control step's kernels, and the world's ray-casting and
collision kernels (a scan and a collision in a small map).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import numpy as np

from wheelsim.core.localization.step_kernel import load_kernel
from wheelsim.core.tracking.warm_up import warm_up as warm_up_control_step
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import PARALLEL_FROM_VEHICLES, Vehicle, VehicleBatch
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


def _vehicle(model: str) -> None:
    """One step of one vehicle and of a batch (the parallel kernel) of ``model``."""
    config = vehicle_config_from_params({'model': model})
    Vehicle(config, 0.001).step(1)
    VehicleBatch([config] * PARALLEL_FROM_VEHICLES, 0.001).step(1)


#: What :func:`warm_up` loads, in order: (what it is, the call that loads it).
PARTS: tuple[tuple[str, Callable[[], None]], ...] = (
    *((f'the {model} vehicle', partial(_vehicle, model)) for model in MODELS),
    ('the localization', load_kernel),
    ('the control step', warm_up_control_step),
    ('the world', warm_up_world),
)


def warm_up(progress: Callable[[int, int, str], None] | None = None) -> None:
    """Load every part of :data:`PARTS`; ``progress(index, count, what)`` is called before
    each (index from 1)."""
    for index, (what, load) in enumerate(PARTS, 1):
        if progress is not None:
            progress(index, len(PARTS), what)
        load()


def _print_progress(index: int, count: int, what: str) -> None:
    print(f'wheelsim: loading the compiled kernels {index}/{count}: {what}', flush=True)


if __name__ == '__main__':
    start_s = time.perf_counter()
    warm_up(_print_progress)
    print('wheelsim: compiled kernels loaded for ' + ', '.join(MODELS)
          + f', the localization, the control step and the world '
          f'({time.perf_counter() - start_s:.1f} s)')
