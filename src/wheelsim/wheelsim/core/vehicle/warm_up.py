"""Load every compiled kernel once: ``python -m wheelsim.core.vehicle.warm_up``.

numba compiles a kernel at its first call and keeps the machine code on disk (``cache=True``);
the Docker image runs this after installing, so that containers start with a warm cache.
"""

from __future__ import annotations

from wheelsim.core.localization.step_kernel import load_kernel
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import PARALLEL_FROM_VEHICLES, Vehicle, VehicleBatch

MODELS = ('bicycle', 'differential', 'omni')


def warm_up() -> None:
    """One step of one vehicle and of a batch (the parallel kernel) of every model, and the
    localization's per-sample kernel."""
    for model in MODELS:
        config = vehicle_config_from_params({'model': model})
        Vehicle(config, 0.001).step(1)
        VehicleBatch([config] * PARALLEL_FROM_VEHICLES, 0.001).step(1)
    load_kernel()


if __name__ == '__main__':
    warm_up()
    print('wheelsim: compiled kernels loaded for ' + ', '.join(MODELS) + ' and the localization')
