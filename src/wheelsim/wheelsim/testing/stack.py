"""The four nodes of a vehicle preset in lock-step, in-process, for tests that drive the whole
stack: vehicle_sim, localization, planner and controller as ``wheelsim run`` builds them (its
clock, its cmd_vel type), from a shipped params file plus the test's parameters."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping
from typing import Any

from wheelsim.core.params_file import node_parameters
from wheelsim.run.lockstep import Lockstep, Recorder
from wheelsim.run.runner import NODE_CLASSES, NODE_NAMES, START_TIME_NS, node_parameter_specs
from wheelsim.shipped import shipped_params_dir


def run_stack(preset: str, parameters: Mapping[str, Mapping[str, Any]], end_time_s: float,
              record: Recorder, extra: Callable[..., Any] | None = None,
              without: Collection[str] = ()) -> None:
    """Run the nodes of the shipped params file ``preset`` (``ackermann_car``) but those named
    in ``without``, with ``parameters`` (node name -> values, over the file's) from 1 s to
    ``end_time_s`` of simulated time, every published message given to
    ``record(topic, message, time_ns)``; ``extra``, a node class on the lock-step seam, runs
    beside them (a test's publisher, or what stands in for a node left out)."""
    specs = node_parameter_specs()
    params_file = shipped_params_dir() / f'{preset}.yaml'
    lockstep = Lockstep(record, START_TIME_NS)
    for name in (name for name in NODE_NAMES if name not in without):
        module, cls = NODE_CLASSES[name]
        values = node_parameters([params_file], f'/{name}', {s.name for s in specs[name]})
        values.update(parameters.get(name, {}), use_sim_time=True)
        if name == 'vehicle_sim':
            values.update(be_reference_clock=False, cmd_vel_type='twist_stamped')
        lockstep.add(getattr(importlib.import_module(module), cls), values)
    if extra is not None:
        lockstep.add(extra, {'use_sim_time': True})
    lockstep.run_until(round(end_time_s * 1e9))
