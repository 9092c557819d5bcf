"""wheelsim's Python API: vehicle_sim's physics as numpy arrays, without ROS (docs/python_api.md).

``import wheelsim.sim as ws``; the names below are kept stable (extended, never renamed):

- :func:`load_vehicle`, :func:`preset_names`, :class:`SimVehicle`: a vehicle from a preset or
  a params file, with vehicle_sim's parameters;
- :func:`simulate` (a command sequence), :func:`rollout` (a policy of state and time), one
  vehicle or a batch; both return a :class:`Trajectory`; :data:`COMMAND_TYPES`,
  :data:`STATE_COLUMNS`;
- :func:`stick_wheel_speeds`: a gamepad's tank or arcade driving as wheel speeds;
- :func:`plot_trajectory`, :func:`plot_speeds`, :func:`plot_tracking_errors`: matplotlib
  figures.
"""

from wheelsim.core.vehicle.command_types import COMMAND_TYPES
from wheelsim.sim.plots import plot_speeds, plot_tracking_errors, plot_trajectory
from wheelsim.sim.rollout import STATE_COLUMNS, Trajectory, rollout, simulate
from wheelsim.sim.sticks import stick_wheel_speeds
from wheelsim.sim.vehicle import SimVehicle, load_vehicle, preset_names

__all__ = ['COMMAND_TYPES', 'STATE_COLUMNS', 'SimVehicle', 'Trajectory', 'load_vehicle',
           'plot_speeds', 'plot_trajectory', 'plot_tracking_errors', 'preset_names', 'rollout',
           'simulate', 'stick_wheel_speeds']
