"""Gymnasium environments on the rollout core: drive a vehicle along a path (policy learning,
quick controller prototyping; docs/python_api.md).

:class:`PathTrackingEnv` is one vehicle, :class:`PathTrackingVectorEnv` N of them stepped
together in one compiled call per step; sub-environment i of a vector env gives bit for bit
what a :class:`PathTrackingEnv` reset with seed ``seed + i`` gives for the same actions. Both
run on :mod:`wheelsim.sim.rollout`'s fleet (vehicle_sim's kernel, command saturation and, with
a map, collision guard). The tracking errors are the run metrics' (``wheelsim run``,
docs/report.md), from :class:`wheelsim.report.geometry.Polyline`: matched step by step, they
are what :meth:`Polyline.match` gives for the whole driven path.

Frames and units: the path and the poses are base_link in ``map`` (x_m, y_m, yaw_rad); the
twist is base_link's body twist (x forward, y left) in m/s and rad/s.

- **action** (float64 Box): ``(vx_mps, wz_radps)`` for differential and bicycle vehicles,
  ``(vx_mps, vy_mps, wz_radps)`` for omni ones, bounded by what the drive can do (see
  :func:`action_bounds`); an action outside the box is clipped to it, a non-finite one raises
  ValueError. It is held for ``dt_s``.
- **observation** (float64 Box, :data:`OBSERVATION_COLUMNS`): ``cross_track_m`` (signed
  distance to the matched point of the path, left > 0), ``heading_error_rad`` (vehicle minus
  path heading there), ``along_track_m`` (matched arc length minus the arc length scheduled at
  ``speed_mps`` for this time, ahead > 0), the body twist ``vx_mps, vy_mps, wz_radps``, and
  ``preview_heading_rad``: the path's heading ``preview_m`` further along, minus the vehicle's.
  Angles in (-pi, pi].
- **reward**: minus the weighted absolute errors after the step,
  ``-(w_c |cross_track_m| + w_h |heading_error_rad| + w_a |along_track_m|)`` with
  ``reward_weights = (w_c [1/m], w_h [1/rad], w_a [1/m])``.
- **terminated**: the matched point is within :data:`END_TOLERANCE_M` of the path's end
  (done), or ``|cross_track_m| > max_cross_track_m`` (lost the path);
  **truncated**: ``time_limit_s`` has passed (default: the scheduled time plus 10 s) and the
  episode did not terminate.
- **reset**: at rest at the path's start, moved sideways by a uniform draw in
  ``+-start_offset_m`` and turned by one in ``+-start_yaw_rad`` (from ``np_random``).
  ``reset(seed=...)`` rebuilds the vehicle, so the same seed gives the same episode (the
  command noise of docs/fidelity.md included: it is seeded by the vehicle's ``seed`` and counts
  steps from there); ``reset()`` without a seed starts a new episode on the same vehicle.

Arguments of both (keywords after ``path``): ``vehicle``, a
:class:`~wheelsim.sim.vehicle.SimVehicle`; ``path``, (M, 3) poses x_m, y_m, yaw_rad of
base_link in map, M >= 2, its yaw the heading to track (None: :func:`figure_eight_path`);
``speed_mps`` (0.5), the scheduled speed along it; ``dt_s`` (0.05), the control period, a
whole number of physics steps; ``start_offset_m`` (0.1), ``start_yaw_rad`` (0.1), the spread of
the start pose; ``max_cross_track_m`` (1.0), the cross-track error that ends an episode;
``time_limit_s`` (None: the path at ``speed_mps`` plus 10 s); ``preview_m`` (0.5), how far
ahead the preview heading is taken; ``reward_weights`` ((1.0, 0.5, 0.1)), (w_c, w_h, w_a) >= 0.
A bad value raises ValueError naming the argument and its allowed range.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import ArrayLike, NDArray

from wheelsim.core.geometry.angles import wrap_angles
from wheelsim.core.localization.scenario import figure_eight
from wheelsim.report.geometry import Polyline
from wheelsim.sim.rollout import _STATE_SOURCES, _finite, _Fleet, _steps_per_period
from wheelsim.sim.vehicle import SimVehicle

#: The observation, in this column order (units in the names).
OBSERVATION_COLUMNS = ('cross_track_m', 'heading_error_rad', 'along_track_m', 'vx_mps',
                       'vy_mps', 'wz_radps', 'preview_heading_rad')
#: An episode is done when the matched point is this close to the path's end [m].
END_TOLERANCE_M = 0.01


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
    limits = vehicle.settings.cmd_vel_limits
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


def _positive(value: float, name: str, unit: str, zero: bool = False) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not (math.isfinite(number) and (number >= 0.0 if zero else number > 0.0)):
        bound = '>= 0' if zero else '> 0'
        raise ValueError(f'{name} = {value!r} must be a finite number {bound} [{unit}]')
    return number


class _Tracking:
    """N vehicles on one path: the state of both environments, as (N, ...) arrays."""

    def __init__(self, vehicle: SimVehicle, path: ArrayLike | None = None, *,
                 speed_mps: float = 0.5, dt_s: float = 0.05, start_offset_m: float = 0.1,
                 start_yaw_rad: float = 0.1, max_cross_track_m: float = 1.0,
                 time_limit_s: float | None = None, preview_m: float = 0.5,
                 reward_weights: ArrayLike = (1.0, 0.5, 0.1)) -> None:
        poses = figure_eight_path() if path is None else _finite(
            path, 'path', (None, 3), 'x_m, y_m, yaw_rad of base_link in map, one pose a row')
        if len(poses) < 2:
            raise ValueError(f'path must have at least 2 poses, got {len(poses)}')
        self.vehicle = vehicle
        self.polyline = Polyline(poses[:, 0], poses[:, 1], poses[:, 2])
        self.length_m = float(self.polyline.vertex_s_m[-1])
        if self.length_m <= END_TOLERANCE_M:
            raise ValueError(f'path must be longer than {END_TOLERANCE_M} m, got '
                             f'{self.length_m:g} m')
        self.start = poses[0]
        self.path_yaw_rad = np.unwrap(poses[:, 2])
        self.speed_mps = _positive(speed_mps, 'speed_mps', 'm/s')
        self.steps = _steps_per_period(vehicle, dt_s)
        self.period_s = self.steps * vehicle.step_period_s
        self.start_spread = np.array([_positive(start_offset_m, 'start_offset_m', 'm', True),
                                      _positive(start_yaw_rad, 'start_yaw_rad', 'rad', True)])
        self.max_cross_track_m = _positive(max_cross_track_m, 'max_cross_track_m', 'm')
        self.time_limit_s = (self.length_m / self.speed_mps + 10.0 if time_limit_s is None
                             else _positive(time_limit_s, 'time_limit_s', 's'))
        self.preview_m = _positive(preview_m, 'preview_m', 'm', True)
        self.weights = _finite(reward_weights, 'reward_weights', (3,),
                               'w_c [1/m], w_h [1/rad], w_a [1/m]')
        if np.any(self.weights < 0.0):
            raise ValueError(f'reward_weights must be >= 0, got {self.weights.tolist()}')
        self.bounds = action_bounds(vehicle)
        self.fleet: _Fleet | None = None
        # per vehicle: time in the episode [s], matched arc length [m], position matched [m]
        self.t_s, self.s_m, self.xy_m = np.zeros(0), np.zeros(0), np.zeros((0, 2))

    def start_poses(self, draws: NDArray[np.float64]) -> NDArray[np.float64]:
        """(k, 3) start poses from (k, 2) uniform draws in [-1, 1) (sideways, turn)."""
        offset_m, turn_rad = (draws * self.start_spread).T
        x_m, y_m, yaw_rad = self.start
        return np.column_stack([x_m - offset_m * math.sin(yaw_rad),
                                y_m + offset_m * math.cos(yaw_rad), yaw_rad + turn_rad])

    def restart(self, poses: NDArray[np.float64], indices: NDArray[np.int64] | None) -> None:
        """Vehicles ``indices`` (None: a new fleet of len(poses)) at rest at ``poses``."""
        if indices is None:
            self.fleet = _Fleet(self.vehicle, poses, (self.vehicle.settings.seed,) * len(poses))
            self.t_s = np.zeros(len(poses))
            self.s_m = np.zeros(len(poses))
            self.xy_m = poses[:, :2].copy()
        else:
            self.fleet.teleport(poses, indices)
            self.t_s[indices] = 0.0
            self.s_m[indices] = 0.0
            self.xy_m[indices] = poses[:, :2]

    def observe(self, indices: slice | NDArray[np.int64] = slice(None)
                ) -> NDArray[np.float64]:
        """(k, 7) observations (:data:`OBSERVATION_COLUMNS`) of vehicles ``indices``, matching
        each one's pose to the path from its previous match."""
        state = self.fleet.states()[indices][:, _STATE_SOURCES]
        x_m, y_m, yaw_rad = state[:, 0], state[:, 1], state[:, 2]
        match = self.polyline.match_next(x_m, y_m, self.xy_m[indices, 0],
                                         self.xy_m[indices, 1], self.s_m[indices])
        self.s_m[indices], self.xy_m[indices] = match.s_m, state[:, :2]
        scheduled_m = np.minimum(self.speed_mps * self.t_s[indices], self.length_m)
        preview_rad = np.interp(match.s_m + self.preview_m, self.polyline.vertex_s_m,
                                self.path_yaw_rad)
        return np.column_stack([match.cross_track_m, wrap_angles(yaw_rad - match.yaw_rad),
                                match.s_m - scheduled_m, state[:, 3:6],
                                wrap_angles(preview_rad - yaw_rad)])

    def step(self, actions: ArrayLike, shape: tuple[int, ...]
             ) -> tuple[NDArray[np.float64], ...]:
        """Hold ``actions`` (of ``shape``) for one period: (observations, rewards, terminated,
        truncated), each with a leading axis N."""
        width = len(self.bounds)
        held = np.clip(_finite(actions, 'action', shape, f'{width} values per vehicle: '
                               'vx_mps, (vy_mps,) wz_radps').reshape(-1, width),
                       -self.bounds, self.bounds)
        twists = np.zeros((len(held), 3))
        twists[:, [0, 2] if width == 2 else [0, 1, 2]] = held
        self.fleet.set_commands(twists)
        self.fleet.step(self.steps)
        self.t_s += self.period_s
        observations = self.observe()
        errors = np.abs(observations[:, :3])
        terminated = ((self.s_m >= self.length_m - END_TOLERANCE_M)
                      | (errors[:, 0] > self.max_cross_track_m))
        # t_s is a sum of periods: the limit within its rounding
        truncated = self.t_s >= self.time_limit_s * (1.0 - 1e-9)
        return observations, -(errors @ self.weights), terminated, truncated & ~terminated


def _spaces(tracking: _Tracking) -> tuple[gym.spaces.Box, gym.spaces.Box]:
    limit = np.array([np.pi if name.endswith('_rad') else np.inf for name in OBSERVATION_COLUMNS])
    return (gym.spaces.Box(-tracking.bounds, tracking.bounds, dtype=np.float64),
            gym.spaces.Box(-limit, limit, dtype=np.float64))


class PathTrackingEnv(gym.Env):
    """Track a path with one vehicle: ``PathTrackingEnv(vehicle, path=None, **options)``
    (the module doc: spaces, reward, episodes, arguments)."""

    metadata = {'render_modes': []}

    def __init__(self, vehicle: SimVehicle, path: ArrayLike | None = None,
                 **options: Any) -> None:
        self._tracking = _Tracking(vehicle, path, **options)
        self.action_space, self.observation_space = _spaces(self._tracking)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        super().reset(seed=seed)
        pose = self._tracking.start_poses(self.np_random.uniform(-1.0, 1.0, (1, 2)))
        fresh = seed is not None or self._tracking.fleet is None
        self._tracking.restart(pose, None if fresh else np.zeros(1, dtype=np.int64))
        return self._tracking.observe()[0], {}

    def step(self, action: ArrayLike
             ) -> tuple[NDArray[np.float64], float, bool, bool, dict[str, Any]]:
        observations, rewards, terminated, truncated = self._tracking.step(
            action, self.action_space.shape)
        return (observations[0], float(rewards[0]), bool(terminated[0]), bool(truncated[0]),
                {})


class PathTrackingVectorEnv(VectorEnv):
    """Track a path with ``num_envs`` vehicles stepped together, a ``gymnasium.vector.
    VectorEnv``: ``PathTrackingVectorEnv(vehicle, num_envs, path=None, **options)`` (the
    module doc: spaces, reward, episodes, arguments; ``num_envs``: an integer >= 1).

    Autoreset ``SAME_STEP``: a sub-environment that ends an episode is reset within that
    ``step``, which returns the first observation of its new episode and, in ``infos``,
    ``final_obs`` (an object array: the episode's last observation where ``_final_obs`` is
    True). ``reset(seed=s)`` seeds sub-environment i with ``s + i``, as ``SyncVectorEnv`` does.
    """

    metadata = {'render_modes': [], 'autoreset_mode': AutoresetMode.SAME_STEP}

    def __init__(self, vehicle: SimVehicle, num_envs: int, path: ArrayLike | None = None,
                 **options: Any) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or num_envs < 1:
            raise ValueError(f'num_envs = {num_envs!r} must be an integer >= 1')
        self.num_envs = int(num_envs)
        self._tracking = _Tracking(vehicle, path, **options)
        self.single_action_space, self.single_observation_space = _spaces(self._tracking)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._randoms: list[np.random.Generator] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        super().reset(seed=seed)
        self._randoms = [seeding.np_random(None if seed is None else seed + i)[0]
                         for i in range(self.num_envs)]
        self._tracking.restart(self._start_poses(np.arange(self.num_envs)), None)
        return self._tracking.observe(), {}

    def step(self, actions: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                NDArray[np.bool_], NDArray[np.bool_],
                                                dict[str, Any]]:
        observations, rewards, terminated, truncated = self._tracking.step(
            actions, self.action_space.shape)
        ended = terminated | truncated
        if not ended.any():
            return observations, rewards, terminated, truncated, {}
        done = np.flatnonzero(ended)
        final = np.full(self.num_envs, None, dtype=object)
        final[done] = list(observations[done])
        self._tracking.restart(self._start_poses(done), done)
        observations[done] = self._tracking.observe(done)
        return (observations, rewards, terminated, truncated,
                {'final_obs': final, '_final_obs': ended})

    def _start_poses(self, indices: NDArray[np.int64]) -> NDArray[np.float64]:
        return self._tracking.start_poses(
            np.concatenate([self._randoms[i].uniform(-1.0, 1.0, (1, 2)) for i in indices]))
