"""ROS parameters files as a node gets them, and the vehicle the launch files build from them.

A launch file reads the same files vehicle_sim reads, so that what it derives from the vehicle
(robot_state_publisher's URDF, the footprint Nav2's costmaps get) is the simulated vehicle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wheelsim.core.params import ParameterError, from_flat
from wheelsim.core.params_file import ParamsFileError, node_parameters
from wheelsim.core.vehicle.config import VehicleConfig, vehicle_config_from_params
from wheelsim.core.vehicle_sim.config import VehicleSimSettings
from wheelsim.core.vehicle_sim.description import vehicle_sim_urdf


def vehicle_sim_values(params_files: Sequence[str], namespace: str,
                       overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters vehicle_sim in ``namespace`` gets from ``params_files`` (given together,
    empty names skipped), then ``overrides``. RuntimeError naming the file and the section for
    a params file ROS would refuse."""
    fqn = '/' + '/'.join(part for part in (namespace.strip('/'), 'vehicle_sim') if part)
    try:
        values = node_parameters([path for path in params_files if path], fqn)
    except ParamsFileError as err:
        raise RuntimeError(str(err)) from None
    return {**values, **overrides}


def simulated_vehicle(label: str, sim_values: Mapping[str, Any]
                      ) -> tuple[VehicleConfig, VehicleSimSettings]:
    """vehicle_sim's vehicle and settings for ``sim_values``; a bad value raises RuntimeError
    naming ``label`` (the params file) and the parameter."""
    try:
        return vehicle_config_from_params(sim_values), from_flat(VehicleSimSettings, sim_values)
    except ParameterError as err:
        raise RuntimeError(f'{label}: vehicle_sim: {err}') from None


def robot_description(label: str, sim_values: Mapping[str, Any]) -> str:
    """The URDF that vehicle_sim publishes with ``sim_values``: the vehicle, its laser and its
    footprint frame (as the node builds it)."""
    return vehicle_sim_urdf(*simulated_vehicle(label, sim_values))
