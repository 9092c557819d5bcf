"""Vehicle configurations for tests and benchmarks."""

from __future__ import annotations

from typing import Any

from wheelsim.core.vehicle.config import VehicleConfig, vehicle_config_from_params


def drive_group(model: str) -> str:
    """The drive actuator group of ``model``: ``drive_actuator`` (bicycle) or
    ``drive_actuators``."""
    return 'drive_actuator' if model == 'bicycle' else 'drive_actuators'


def ideal_config(model: str, **leaves: Any) -> VehicleConfig:
    """``model`` without dead time, lag or limits, plus ``leaves``: keys below
    ``model_params.<model>``, dotted or with ``__`` for the dots (``steering_actuator__bias``)."""
    drive = drive_group(model)
    values: dict[str, Any] = {'model': model}
    for leaf in ('dead_time', 'time_constant', 'max_velocity', 'max_acceleration'):
        values[f'model_params.{model}.{drive}.{leaf}'] = 0.0
    if model == 'bicycle':
        for leaf in ('dead_time', 'time_constant', 'max_velocity'):
            values[f'model_params.bicycle.steering_actuator.{leaf}'] = 0.0
    for key, value in leaves.items():
        values[f'model_params.{model}.{key.replace("__", ".")}'] = value
    return vehicle_config_from_params(values)
