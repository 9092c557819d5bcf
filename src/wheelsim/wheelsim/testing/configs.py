"""Planner and controller configurations for tests and benchmarks, without a running vehicle_sim.

The nodes take many defaults from vehicle_sim's ``vehicle_description``; code that uses the core
directly either describes a vehicle the same way (:func:`planner_for`, :func:`controller_for`:
what the nodes would run with) or sets every such parameter (:data:`FIXED_PLANNER`,
:data:`FIXED_CONTROLLER`: the values these parameters had before they came from the vehicle).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from wheelsim.core.params import from_flat
from wheelsim.core.planning import config as planning
from wheelsim.core.tracking import config as tracking
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.description import VehicleDescription, describe

#: Every "from the vehicle" planner parameter set (a differential base, or pass ``model``).
FIXED_PLANNER = {'model': 'differential', 'limits.max_speed': 1.0,
                 'limits.max_acceleration': 0.5, 'limits.max_lateral_acceleration': 1.0,
                 'limits.max_curvature': 1.0, 'limits.max_curvature_rate': 0.0}
#: Every "from the vehicle" controller parameter set (a differential base, or pass ``model``).
FIXED_CONTROLLER = {
    'model': 'differential', 'wheel_base': 2.0, 'max_steering_angle': math.pi / 6,
    'lead_time': 0.0, 'limits.max_linear_x': 2.0, 'limits.min_linear_x': -0.3,
    'limits.max_linear_y': 1.0, 'limits.max_angular_z': 2.0,
    'limits.max_linear_acceleration': 2.0, 'untimed_plans.max_acceleration': 2.0,
    'untimed_plans.max_lateral_acceleration': 2.0,
}


def description_of(vehicle: Mapping[str, Any]) -> VehicleDescription:
    """The description vehicle_sim publishes when given ``vehicle`` (dotted parameters)."""
    return describe(vehicle_config_from_params(vehicle))


def planner_for(vehicle: Mapping[str, Any], values: Mapping[str, Any] | None = None
                ) -> planning.PlannerConfig:
    """The planner configuration ``values`` as the node resolves it for ``vehicle``."""
    config = from_flat(planning.PlannerConfig, values or {})
    return planning.with_vehicle(config, description_of(vehicle))[0]


def controller_for(vehicle: Mapping[str, Any], values: Mapping[str, Any] | None = None
                   ) -> tracking.ControllerConfig:
    """The controller configuration ``values`` as the node resolves it for ``vehicle``."""
    config = from_flat(tracking.ControllerConfig, values or {})
    return tracking.with_vehicle(config, description_of(vehicle))[0]
