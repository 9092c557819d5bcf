"""Load the compiled kernels the nodes call per sample once: ``python -m wheelsim.core.warm_up``.

numba compiles a kernel at its first call and keeps the machine code on disk (``cache=True``);
the Docker image runs this after installing, so that containers start with a warm cache: the
vehicle's stepping kernels (one vehicle and a parallel batch of every model), the
localization's per-sample kernel and the control step's kernels. (The world's ray-casting and
collision kernels are not among them: they load at a map's first scan.)
"""

from __future__ import annotations

from wheelsim.core.localization.step_kernel import load_kernel
from wheelsim.core.tracking.warm_up import warm_up as warm_up_control_step
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import PARALLEL_FROM_VEHICLES, Vehicle, VehicleBatch

MODELS = ('bicycle', 'differential', 'omni')


def warm_up() -> None:
    """One step of one vehicle and of a batch (the parallel kernel) of every model, the
    localization's per-sample kernel and a control step's kernels."""
    for model in MODELS:
        config = vehicle_config_from_params({'model': model})
        Vehicle(config, 0.001).step(1)
        VehicleBatch([config] * PARALLEL_FROM_VEHICLES, 0.001).step(1)
    load_kernel()
    warm_up_control_step()


if __name__ == '__main__':
    warm_up()
    print('wheelsim: compiled kernels loaded for ' + ', '.join(MODELS)
          + ', the localization and the control step')
