"""The stepping kernel of :mod:`.stepping` with the vehicles spread over every core, for large
batches (:class:`wheelsim.core.vehicle.model.VehicleBatch` from ``PARALLEL_FROM_VEHICLES`` on).

Apart from the serial kernels because its ``prange`` is numba's own: importing this module
imports numba, which a node or a headless run, stepping one vehicle, never needs.
"""

from __future__ import annotations

from wheelsim.core.compiled import compiled_parallel, prange
from wheelsim.core.vehicle.stepping import _step_vehicle


@compiled_parallel
def step_parallel(model, n_steps, first_step, params, state, history):
    """Step every vehicle ``n_steps`` times, vehicles spread over all cores (arguments as
    :func:`wheelsim.core.vehicle.stepping.step_serial`)."""
    for i in prange(state.shape[0]):
        _step_vehicle(model, n_steps, first_step, params[i], state[i], history[i])
