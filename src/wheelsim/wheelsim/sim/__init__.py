"""wheelsim's Python API: vehicle_sim's physics as numpy arrays, without ROS (docs/python_api.md).

``import wheelsim.sim as ws``; the names below are kept stable (extended, never renamed):

- :func:`load_vehicle`, :func:`preset_names`, :class:`SimVehicle`: a vehicle from a preset or
  a params file, with vehicle_sim's parameters;
- :func:`simulate` (a command sequence), :func:`rollout` (a policy of state and time), one
  vehicle or a batch; both return a :class:`Trajectory`; :data:`COMMAND_TYPES`,
  :data:`STATE_COLUMNS`;
- :func:`stick_wheel_speeds`: a gamepad's tank or arcade driving as wheel speeds;
- :func:`plot_trajectory`, :func:`plot_speeds`, :func:`plot_tracking_errors`: matplotlib
  figures;
- :class:`PathTrackingEnv`, :class:`GoalReachingEnv` and their vector envs
  :class:`PathTrackingVectorEnv`, :class:`GoalReachingVectorEnv`: Gymnasium environments that
  track a path (:func:`figure_eight_path` by default) or reach a pose;
  :data:`PATH_OBSERVATION_COLUMNS`, :data:`GOAL_OBSERVATION_COLUMNS`, :func:`action_bounds`.
"""

from wheelsim.core.vehicle.command_types import COMMAND_TYPES
from wheelsim.sim.env import (
    GOAL_OBSERVATION_COLUMNS,
    PATH_OBSERVATION_COLUMNS,
    GoalReachingEnv,
    GoalReachingVectorEnv,
    PathTrackingEnv,
    PathTrackingVectorEnv,
)
from wheelsim.sim.plots import plot_speeds, plot_tracking_errors, plot_trajectory
from wheelsim.sim.rollout import STATE_COLUMNS, Trajectory, rollout, simulate
from wheelsim.sim.sticks import stick_wheel_speeds
from wheelsim.sim.tasks import action_bounds, figure_eight_path
from wheelsim.sim.vehicle import SimVehicle, load_vehicle, preset_names

__all__ = ['COMMAND_TYPES', 'GOAL_OBSERVATION_COLUMNS', 'PATH_OBSERVATION_COLUMNS',
           'STATE_COLUMNS', 'GoalReachingEnv', 'GoalReachingVectorEnv', 'PathTrackingEnv',
           'PathTrackingVectorEnv', 'SimVehicle', 'Trajectory', 'action_bounds',
           'figure_eight_path', 'load_vehicle', 'plot_speeds', 'plot_trajectory',
           'plot_tracking_errors', 'preset_names', 'rollout', 'simulate', 'stick_wheel_speeds']
