"""The stepping kernel of :mod:`.stepping` with the vehicles spread over every core, for large
calls (:class:`wheelsim.core.vehicle.model.VehicleBatch`, from ``PARALLEL_FROM_VEHICLE_STEPS``
on).

Apart from the serial kernels because its ``prange`` is numba's own: importing this module
imports numba, which a node or a headless run, stepping one vehicle, never needs.

Importing it sets ``OMP_WAIT_POLICY=PASSIVE`` unless the environment sets it: OpenMP threads
that finish their share then sleep instead of spinning. On a machine whose cores are busy with
other work (a learner beside a vectorised environment, a test run) a spinning thread holds a
core the others need, and every call waited for the scheduler: 64 vehicles x 10 steps ran 25
times slower than on one thread (BENCHMARKS.md, "Python API"). It takes effect where numba's
OpenMP threading layer starts after this import, as it does at the first parallel call.
"""

from __future__ import annotations

import os

from wheelsim.core.compiled import compiled_parallel, prange
from wheelsim.core.vehicle.stepping import _step_vehicle

os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')


@compiled_parallel
def step_parallel(model, n_steps, first_step, params, state, history):
    """Step every vehicle ``n_steps`` times, vehicles spread over all cores (arguments as
    :func:`wheelsim.core.vehicle.stepping.step_serial`)."""
    for i in prange(state.shape[0]):
        _step_vehicle(model, n_steps, first_step, params[i], state[i], history[i])
