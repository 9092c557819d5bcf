"""Calibration recordings for tests and benchmarks, made by driving wheelsim's own core with
known parameters."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from wheelsim.core.calibration.excitation import Step
from wheelsim.core.calibration.recording import Recording
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.core.vehicle.stepping import S_STEER


def record_core(vehicle: Vehicle, steps: Sequence[Step], sample_every: int = 20,
                command_every: int = 50) -> Recording:
    """Drive ``vehicle`` through ``steps`` (commands re-sent every ``command_every`` steps, as
    a controller does), sampling the twist, wheel rates and steering every ``sample_every``
    steps: the Recording a bag of that run would give."""
    dt = vehicle.step_period_s
    command_t, commands, sample_t, twists, rates, steering = [], [], [], [], [], []
    wheels = [i for i, n in enumerate(vehicle.joint_names) if 'steering' not in n]
    k = 0

    def sample() -> None:
        state = vehicle.state()
        sample_t.append(k * dt)
        twists.append((state.vx_mps, state.vy_mps, state.wz_radps))
        rates.append([state.joint_velocities_radps[i] for i in wheels])
        steering.append(vehicle._batch.state_row(0)[S_STEER])

    sample()
    for hold_s, command in steps:
        end = k + round(hold_s / dt)
        while k < end:
            if k % command_every == 0:
                vehicle.set_command(*command)
                command_t.append(k * dt)
                commands.append(command)
            n = min(sample_every - k % sample_every, end - k)
            vehicle.step(n)
            k += n
            if k % sample_every == 0:
                sample()
    names = tuple(vehicle.joint_names[i] for i in wheels)
    bicycle = vehicle.config.model == 'bicycle'
    return Recording(np.array(command_t), np.array(commands), np.array(sample_t),
                     np.array(twists), np.array(sample_t), np.array(rates), names,
                     np.array(steering) if bicycle else np.empty(0))
