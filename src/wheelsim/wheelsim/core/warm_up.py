"""Load the compiled kernels the nodes call once: ``python -m wheelsim.core.warm_up``.

numba compiles a kernel at its first call and keeps the machine code on disk (``cache=True``);
the Docker image runs this after installing, so that containers start with a warm cache: the
vehicle's stepping kernels (one vehicle and a parallel batch of every model), the
localization's per-sample kernel, the control step's kernels, and the world's ray-casting and
collision kernels (a scan and a collision in a small map).
"""

from __future__ import annotations

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


def warm_up() -> None:
    """One step of one vehicle and of a batch (the parallel kernel) of every model, the
    localization's per-sample kernel, a control step's kernels and the world's kernels."""
    for model in MODELS:
        config = vehicle_config_from_params({'model': model})
        Vehicle(config, 0.001).step(1)
        VehicleBatch([config] * PARALLEL_FROM_VEHICLES, 0.001).step(1)
    load_kernel()
    warm_up_control_step()
    warm_up_world()


if __name__ == '__main__':
    warm_up()
    print('wheelsim: compiled kernels loaded for ' + ', '.join(MODELS)
          + ', the localization, the control step and the world')
