"""The tasks of the Gymnasium environments (:mod:`wheelsim.sim.env`): N vehicles stepped
together, what they observe, their errors and when an episode ends, as (N, ...) arrays.

:class:`PathTask` tracks a path, :class:`GoalTask` reaches a pose; both run on
:mod:`wheelsim.sim.rollout`'s fleet (vehicle_sim's kernel, command saturation and, with a map,
collision guard) through their base, :class:`Task`. Their errors are the run metrics' (docs/
report.md): for a path those of :class:`wheelsim.report.geometry.Polyline` (matched step by
step, they are what :meth:`Polyline.match` gives for the whole driven path; before the path's
start and past its end the distance to its first or last pose, where the metrics and the
controller measure along the extended end segment), for a goal the ``goal_position_error_m``
and ``goal_heading_error_rad`` of the current pose.

Frames and units: poses are base_link in ``map`` (x_m, y_m, yaw_rad); twists base_link's body
twist (x forward, y left) in m/s and rad/s; angles in (-pi, pi].
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wheelsim.core.geometry.angles import wrap_angles
from wheelsim.core.localization.scenario import figure_eight
from wheelsim.core.planning.trajectory import trajectory_from_poses
from wheelsim.core.tracking.config import lead_time_of
from wheelsim.core.tracking.policy import OBSERVATION_COLUMNS, path_observations
from wheelsim.core.vehicle.description import describe
from wheelsim.core.vehicle.model import COMMAND_LIMIT
from wheelsim.report.geometry import Polyline
from wheelsim.report.metrics import DEFAULT_GOAL_TOLERANCE_M
from wheelsim.sim.rollout import (
    _FLEET_MEMORY,
    _STATE_SOURCES,
    _finite,
    _Fleet,
    _start,
    _steps_per_period,
    memory_for,
    real_number,
)
from wheelsim.sim.vehicle import SimVehicle, check_vehicle

#: A path is done when the matched point is this close to its end [m].
END_TOLERANCE_M = 0.01
#: The fastest schedule a path may have [m/s]: the highest ``max_velocity`` a drive can have.
MAX_SPEED_MPS = 1000.0
_TWIST = ('vx_mps', 'vy_mps', 'wz_radps')


def figure_eight_path() -> NDArray[np.float64]:
    """The default path: one lap of a 6 m x 3 m figure-eight from the origin (its crossing),
    (201, 3) x_m, y_m, yaw_rad (:func:`wheelsim.core.localization.scenario.figure_eight`)."""
    return figure_eight(duration_s=20.0, rate_hz=10.0, size_m=3.0, lap_s=20.0).poses


def action_bounds(vehicle: SimVehicle) -> NDArray[np.float64]:
    """The largest action: ``(vx_mps, wz_radps)``, or ``(vx_mps, vy_mps, wz_radps)`` for omni.

    Speeds up to the drive's ``max_velocity``; turn rates up to the rate at that speed on the
    tightest turn (differential: both wheels opposite, omni: turning on the spot, bicycle: the
    steering at ``max_position``, or 90 degrees without a limit); a drive without a speed limit
    and every value beyond ``cmd_vel_limits``: ``cmd_vel_limits``.
    """
    limits = check_vehicle(vehicle).settings.cmd_vel_limits
    model = vehicle.config.active
    speed_mps = vehicle.config.drive.max_velocity or limits.linear
    if vehicle.model == 'differential':
        turn_radps = 2.0 * speed_mps / model.track
    elif vehicle.model == 'omni':
        turn_radps = speed_mps / model.lever_m
    else:
        steering_rad = model.steering_actuator.max_position or math.pi / 2
        if model.drive_on_steered_wheel:
            turn_radps = speed_mps * math.sin(min(steering_rad, math.pi / 2)) / model.wheel_base
        else:
            turn_radps = speed_mps * math.tan(steering_rad) / model.wheel_base
    speed_mps, turn_radps = min(speed_mps, limits.linear), min(turn_radps, limits.angular)
    if vehicle.model == 'omni':
        return np.array([speed_mps, speed_mps, turn_radps])
    return np.array([speed_mps, turn_radps])


def _positive(value: float, name: str, unit: str, zero: bool = False,
              limit: float = math.inf) -> float:
    """``value`` as a float; ValueError naming ``name`` unless it is a real number (not a bool
    or a string), finite and > 0 (``zero``: >= 0), at most ``limit``."""
    number = real_number(value)
    if not (math.isfinite(number) and (number >= 0.0 if zero else number > 0.0)
            and number <= limit):
        bound = ('>= 0' if zero else '> 0') + (
            f' and at most {limit:g}' if math.isfinite(limit) else '')
        raise ValueError(f'{name} = {value!r} must be a finite number {bound} [{unit}]')
    return number


class Task:
    """What both tasks share: N vehicles of one :class:`SimVehicle` started near ``start``
    (x_m, y_m, yaw_rad), held actions, episode time, the reward from the errors.

    Subclasses set :attr:`columns` (the observation, units in the names) and
    :attr:`weight_units`, and define :meth:`_measure` and :meth:`_forget`.
    """

    columns: tuple[str, ...] = ()
    weight_units: tuple[str, ...] = ()

    def __init__(self, vehicle: SimVehicle, start: NDArray[np.float64], time_limit_s: float,
                 dt_s: float, start_offset_m: float, start_yaw_rad: float,
                 reward_weights: ArrayLike) -> None:
        self.vehicle = vehicle
        self.start = start
        self.steps = _steps_per_period(vehicle, dt_s)
        self.period_s = self.steps * vehicle.step_period_s
        self.time_limit_s = _positive(time_limit_s, 'time_limit_s', 's')
        # at most COMMAND_LIMIT, as poses: the start poses stay within what the core takes
        self.start_spread = np.array([
            _positive(start_offset_m, 'start_offset_m', 'm', True, COMMAND_LIMIT),
            _positive(start_yaw_rad, 'start_yaw_rad', 'rad', True, COMMAND_LIMIT)])
        meaning = ', '.join(f'w{i} [{unit}]' for i, unit in enumerate(self.weight_units))
        self.weights = _finite(reward_weights, 'reward_weights',
                               (len(self.weight_units),), meaning)
        if np.any(self.weights < 0.0):
            raise ValueError(f'reward_weights must be >= 0, got {self.weights.tolist()}')
        self.bounds = action_bounds(vehicle)
        self.fleet: _Fleet | None = None
        self.t_s = np.zeros(0)  # per vehicle: time in the episode [s]

    def start_poses(self, draws: NDArray[np.float64]) -> NDArray[np.float64]:
        """(k, 3) start poses from (k, 2) uniform draws in [-1, 1): moved sideways by up to
        ``start_offset_m`` and turned by up to ``start_yaw_rad`` from ``start``."""
        offset_m, turn_rad = (draws * self.start_spread).T
        x_m, y_m, yaw_rad = self.start
        return np.column_stack([x_m - offset_m * math.sin(yaw_rad),
                                y_m + offset_m * math.cos(yaw_rad), yaw_rad + turn_rad])

    def restart(self, poses: NDArray[np.float64], indices: NDArray[np.int64] | None,
                noise_seeds: tuple[int, ...] = ()) -> None:
        """Vehicles ``indices`` at rest at ``poses``; ``indices`` None: a new fleet of
        len(poses) vehicles whose command noise is seeded by ``noise_seeds`` (one each)."""
        if indices is None:
            with memory_for(f'num_envs = {len(poses)}', _FLEET_MEMORY):
                self.fleet = _Fleet(self.vehicle, poses, noise_seeds)
            self.t_s = np.zeros(len(poses))
        else:
            self.fleet.teleport(poses, indices)
            self.t_s[indices] = 0.0
        self._forget(poses, slice(None) if indices is None else indices)

    def observe(self, indices: slice | NDArray[np.int64] = slice(None)
                ) -> NDArray[np.float64]:
        """(k, C) observations of vehicles ``indices`` (:attr:`columns`)."""
        return self._measure(indices)[0]

    def step(self, actions: ArrayLike, shape: tuple[int, ...]
             ) -> tuple[NDArray[np.float64], ...]:
        """Hold ``actions`` (of ``shape``, clipped to :attr:`bounds`) for one period:
        (observations, rewards, terminated, truncated), each with a leading axis N."""
        width = len(self.bounds)
        held = np.clip(_finite(actions, 'action', shape, f'{width} values per vehicle: '
                               'vx_mps, (vy_mps,) wz_radps', math.inf).reshape(-1, width),
                       -self.bounds, self.bounds)
        twists = np.zeros((len(held), 3))
        twists[:, [0, 2] if width == 2 else [0, 1, 2]] = held
        self.fleet.set_commands(twists)
        self.fleet.step(self.steps)
        self.t_s += self.period_s
        observations, errors, terminated = self._measure(slice(None))
        # t_s is a sum of periods: the limit within its rounding
        truncated = (self.t_s >= self.time_limit_s * (1.0 - 1e-9)) & ~terminated
        # column by column: a matrix product's rounding depends on how many vehicles there are
        reward = -sum(errors[:, k] * weight for k, weight in enumerate(self.weights))
        return observations, reward, terminated, truncated

    def _states(self, indices: slice | NDArray[np.int64]) -> NDArray[np.float64]:
        """(k, 6) x_m, y_m, yaw_rad, vx_mps, vy_mps, wz_radps of vehicles ``indices``."""
        return self.fleet.states()[indices][:, _STATE_SOURCES]

    def _measure(self, indices: slice | NDArray[np.int64]
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
        """(observations, absolute errors (one per weight), terminated) of ``indices``."""
        raise NotImplementedError

    def _forget(self, poses: NDArray[np.float64], indices: slice | NDArray[np.int64]) -> None:
        """Start the episodes of vehicles ``indices`` at ``poses``."""


class PathTask(Task):
    """Track ``path`` ((M, 3) x_m, y_m, yaw_rad, M >= 2; None: :func:`figure_eight_path`)
    on a schedule of ``speed_mps``; :mod:`wheelsim.sim.env` has the contract."""

    columns = OBSERVATION_COLUMNS
    weight_units = ('1/m', '1/rad', '1/m')

    def __init__(self, vehicle: SimVehicle, path: ArrayLike | None = None, *,
                 speed_mps: float = 0.5, max_cross_track_m: float = 1.0,
                 preview_m: float = 0.5, lead_time_s: float | None = None,
                 time_limit_s: float | None = None,
                 dt_s: float = 0.05, start_offset_m: float = 0.1, start_yaw_rad: float = 0.1,
                 reward_weights: ArrayLike = (1.0, 0.5, 0.1)) -> None:
        poses = figure_eight_path() if path is None else _finite(
            path, 'path', (None, 3), 'x_m, y_m, yaw_rad of base_link in map, one pose a row')
        if len(poses) < 2:
            raise ValueError(f'path must have at least 2 poses, got {len(poses)}')
        self.polyline = Polyline(poses[:, 0], poses[:, 1], poses[:, 2])
        self.length_m = float(self.polyline.vertex_s_m[-1])
        if self.length_m <= END_TOLERANCE_M:
            raise ValueError(f'path must be longer than {END_TOLERANCE_M} m, got '
                             f'{self.length_m:g} m')
        repeated = np.flatnonzero(np.diff(self.polyline.vertex_s_m) <= 0.0)
        if len(repeated):
            raise ValueError(f'path rows {repeated[0]} and {repeated[0] + 1} are at the same '
                             'position; each pose must move on')
        self.speed_mps = _positive(speed_mps, 'speed_mps', 'm/s')
        too_slow = ValueError(f'speed_mps = {speed_mps!r} must be a number in (0, '
                              f'{MAX_SPEED_MPS:g}] [m/s] that times the path of '
                              f'{self.length_m:g} m in finite seconds')
        # faster: the schedule's velocities overflow to NaN (1e200); slower than a subnormal
        # number: its times (1e-310)
        if self.speed_mps > MAX_SPEED_MPS or not math.isfinite(self.length_m / self.speed_mps):
            raise too_slow
        self.max_cross_track_m = _positive(max_cross_track_m, 'max_cross_track_m', 'm')
        self.preview_m = _positive(preview_m, 'preview_m', 'm', True)
        self.lead_time_s = lead_time_of(describe(vehicle.config)) if lead_time_s is None else (
            _positive(lead_time_s, 'lead_time_s', 's', True))
        #: The plan: the path at ``speed_mps``, as the controller rebuilds a stamped plan.
        try:  # so slow that its times overflow where they are differenced (1e-200)
            with np.errstate(over='raise'):
                self.schedule = trajectory_from_poses(self.polyline.vertex_s_m / self.speed_mps,
                                                      poses[:, 0], poses[:, 1], poses[:, 2])
        except FloatingPointError:
            raise too_slow from None
        if len(self.schedule.legs) > 1:  # a stretch driven back over: matched on one branch
            raise ValueError(f'path reverses its direction of travel at row '
                             f'{self.schedule.legs[0].last}: a path must go one way (forwards or '
                             'backwards) throughout; track each leg with an environment of its '
                             'own')
        if time_limit_s is None:
            time_limit_s = self.schedule.duration_s + 10.0
        super().__init__(vehicle, poses[0], time_limit_s, dt_s, start_offset_m, start_yaw_rad,
                         reward_weights)
        # per vehicle: the arc length [m] and position [m] matched last
        self.s_m, self.xy_m = np.zeros(0), np.zeros((0, 2))

    def _forget(self, poses: NDArray[np.float64], indices: slice | NDArray[np.int64]) -> None:
        if isinstance(indices, slice):
            self.s_m, self.xy_m = np.zeros(len(poses)), poses[:, :2].copy()
        else:
            self.s_m[indices], self.xy_m[indices] = 0.0, poses[:, :2]

    def _measure(self, indices: slice | NDArray[np.int64]
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
        state = self._states(indices)
        x_m, y_m, yaw_rad = state[:, 0], state[:, 1], state[:, 2]
        match = self.polyline.match_next(x_m, y_m, self.xy_m[indices, 0],
                                         self.xy_m[indices, 1], self.s_m[indices])
        self.s_m[indices], self.xy_m[indices] = match.s_m, state[:, :2]
        plan, t_s = self.schedule, self.t_s[indices]
        ahead_s = t_s + self.lead_time_s
        preview_rad = np.interp(match.s_m + self.preview_m, plan.s_m, plan.yaw_rad)
        observations = path_observations(
            match.cross_track_m, wrap_angles(yaw_rad - match.yaw_rad),
            match.s_m - np.interp(t_s, plan.t_s, plan.s_m), state[:, 3:6],
            wrap_angles(preview_rad - yaw_rad),
            np.column_stack([np.interp(ahead_s, plan.t_s, plan.vx_mps),
                             np.interp(ahead_s, plan.t_s, plan.vy_mps),
                             np.interp(ahead_s, plan.t_s, plan.wz_radps)]))
        errors = np.abs(observations[:, :3])
        terminated = ((match.s_m >= self.length_m - END_TOLERANCE_M)
                      | (errors[:, 0] > self.max_cross_track_m))
        return observations, errors, terminated


class GoalTask(Task):
    """Reach the pose ``goal`` (x_m, y_m, yaw_rad) from ``start`` (None: the vehicle's
    ``initial_pose``); :mod:`wheelsim.sim.env` has the contract."""

    columns = ('goal_x_m', 'goal_y_m', 'goal_yaw_rad', *_TWIST)
    weight_units = ('1/m', '1/rad')

    def __init__(self, vehicle: SimVehicle, goal: ArrayLike, *,
                 start: ArrayLike | None = None,
                 goal_tolerance_m: float = DEFAULT_GOAL_TOLERANCE_M,
                 goal_yaw_tolerance_rad: float = 0.1, time_limit_s: float = 30.0,
                 dt_s: float = 0.05, start_offset_m: float = 0.1, start_yaw_rad: float = 0.1,
                 reward_weights: ArrayLike = (1.0, 0.5)) -> None:
        self.goal = _finite(goal, 'goal', (3,), 'x_m, y_m, yaw_rad of base_link in map')
        self.tolerances = np.array([
            _positive(goal_tolerance_m, 'goal_tolerance_m', 'm'),
            _positive(goal_yaw_tolerance_rad, 'goal_yaw_tolerance_rad', 'rad')])
        start_pose = _start(vehicle, None, 1)[0] if start is None else _finite(
            start, 'start', (3,), 'x_m, y_m, yaw_rad of base_link in map')
        super().__init__(vehicle, start_pose, time_limit_s, dt_s, start_offset_m,
                         start_yaw_rad, reward_weights)

    def _measure(self, indices: slice | NDArray[np.int64]
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
        state = self._states(indices)
        dx_m, dy_m = self.goal[0] - state[:, 0], self.goal[1] - state[:, 1]
        cos_yaw, sin_yaw = np.cos(state[:, 2]), np.sin(state[:, 2])
        to_goal_rad = wrap_angles(self.goal[2] - state[:, 2])
        observations = np.column_stack([cos_yaw * dx_m + sin_yaw * dy_m,
                                        cos_yaw * dy_m - sin_yaw * dx_m, to_goal_rad,
                                        state[:, 3:6]])
        errors = np.column_stack([np.hypot(dx_m, dy_m), np.abs(to_goal_rad)])
        return observations, errors, np.all(errors <= self.tolerances, axis=1)
