"""Gymnasium environments on the rollout core: track a path or reach a pose (policy learning,
quick controller prototyping; docs/python_api.md).

:class:`PathTrackingEnv` and :class:`GoalReachingEnv` drive one vehicle;
:class:`PathTrackingVectorEnv` and :class:`GoalReachingVectorEnv` drive N, stepped together in
one compiled call per step, and sub-environment i gives bit for bit what the single env reset
with seed ``seed + i`` gives for the same actions. The tasks (observations, errors, ends) are
:mod:`wheelsim.sim.tasks`'; their errors are the run metrics' (docs/report.md).

Frames and units: poses are base_link in ``map`` (x_m, y_m, yaw_rad); the twist is base_link's
body twist (x forward, y left) in m/s and rad/s; angles in (-pi, pi].

Both tasks:

- **action** (float64 Box): ``(vx_mps, wz_radps)`` for differential and bicycle vehicles,
  ``(vx_mps, vy_mps, wz_radps)`` for omni ones, bounded by what the drive can do
  (:func:`~wheelsim.sim.tasks.action_bounds`); an action outside the box is clipped to it, a
  non-finite one raises ValueError. It is held for ``dt_s`` (0.05 s by default; a whole number
  of physics steps).
- **reward**: minus the weighted errors after the step, ``-(reward_weights . errors)``.
- **truncated**: ``time_limit_s`` has passed and the episode did not terminate.
- **reset**: at rest at the start pose, moved sideways by a uniform draw in ``+-start_offset_m``
  (0.1) and turned by one in ``+-start_yaw_rad`` (0.1) (both in [0, 1e6], as poses), from
  ``np_random``. ``reset(seed=...)`` (and the first ``reset``) rebuilds the vehicle, its command
  noise (docs/fidelity.md) seeded by a draw from ``np_random`` after the start pose (the vehicle's
  ``seed`` parameter is not used), so the same seed gives the same episode and another seed, or
  another sub-environment, other noise; ``reset()`` without a seed starts a new episode on the same
  vehicle, its noise going on. ``step`` before the first ``reset`` raises Gymnasium's
  ``ResetNeeded``; ``reset`` takes no ``options`` (a non-empty dict is a ValueError).
- **vector envs**: autoreset ``SAME_STEP``: a sub-environment that ends an episode is reset
  within that ``step``, which returns the first observation of its new episode and, in
  ``infos``, ``final_obs`` (an object array: the episode's last observation where
  ``_final_obs`` is True) and ``final_info`` (``{}``, where ``_final_info`` is True: the last
  step's infos, empty, as ``SyncVectorEnv`` gives them). ``reset(seed=s)`` seeds
  sub-environment i with ``s + i``, and ``reset(seed=[s0, s1, ...])`` (one per
  sub-environment) with ``s_i``, as ``SyncVectorEnv`` does, except that a None in the list
  gives that one an unpredictable seed (a new vehicle and noise, as every seeded reset) where
  ``SyncVectorEnv`` resets it unseeded;
  ``reset()`` without a seed resets each as the single env does.

Path tracking, ``PathTrackingEnv(vehicle, path=None, **options)``: ``path`` (M, 3) poses, M >=
2, consecutive poses apart, the yaw the heading to track, one direction of travel throughout (no
cusp: a path folding back over itself would be matched on the wrong branch) (None:
:func:`~wheelsim.sim.tasks.figure_eight_path`), started at its first pose and scheduled at
``speed_mps`` (0.5; in (0, 1000] m/s) as the controller times a stamped plan
(:func:`~wheelsim.core.planning.trajectory.trajectory_from_poses`).

- **observation** (:data:`PATH_OBSERVATION_COLUMNS`): ``cross_track_m`` (signed distance to the
  matched point of the path, left > 0), ``heading_error_rad`` (vehicle minus path heading
  there), ``along_track_m`` (matched arc length minus the arc length scheduled for this time,
  ahead > 0), the body twist ``vx_mps, vy_mps, wz_radps``, ``preview_heading_rad``: the
  path's heading ``preview_m`` (0.5) further along, minus the vehicle's, and
  ``reference_vx_mps, reference_vy_mps, reference_wz_radps``: the planned body twist
  ``lead_time_s`` later on the schedule (default: the drive's dead time plus time constant, the
  controller's ``lead_time``). The controller's ``algorithm: policy`` hands a policy the same
  observation in the ROS loop (:mod:`wheelsim.core.tracking.policy`).
- **errors**: ``|cross_track_m|, |heading_error_rad|, |along_track_m|``, ``reward_weights``
  (1.0 [1/m], 0.5 [1/rad], 0.1 [1/m]).
- **terminated**: the matched point is within 1 cm of the path's end (done), or
  ``|cross_track_m| > max_cross_track_m`` (1.0; lost the path). ``time_limit_s``: the path at
  ``speed_mps`` plus 10 s by default.

Goal reaching, ``GoalReachingEnv(vehicle, goal, **options)``: ``goal`` (x_m, y_m, yaw_rad),
started at ``start`` (None: the vehicle's ``initial_pose``).

- **observation** (:data:`GOAL_OBSERVATION_COLUMNS`): the goal in base_link, ``goal_x_m,
  goal_y_m, goal_yaw_rad`` (goal minus vehicle heading), and the body twist.
- **errors**: the position error [m] and ``|goal_yaw_rad|``, ``reward_weights`` (1.0 [1/m],
  0.5 [1/rad]).
- **terminated**: within ``goal_tolerance_m`` (0.1) and ``goal_yaw_tolerance_rad`` (0.1) of
  the goal. ``time_limit_s``: 30 s by default.

A bad argument raises ValueError naming it and its allowed range; an unknown option, ValueError
naming it and the known ones.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import ArrayLike, NDArray

from wheelsim.core.params import unknown_keys
from wheelsim.sim.rollout import memory_for
from wheelsim.sim.tasks import GoalTask, PathTask, Task
from wheelsim.sim.vehicle import SimVehicle, check_vehicle

#: The observations, in these column orders (units in the names).
PATH_OBSERVATION_COLUMNS = PathTask.columns
GOAL_OBSERVATION_COLUMNS = GoalTask.columns


def _task(env: object, vehicle: SimVehicle, args: tuple[Any, ...], options: dict[str, Any]
          ) -> Task:
    """``env``'s task (of its ``task_type``) from the constructor's arguments; ValueError
    naming an unknown option (with the known ones) or a missing or extra argument."""
    task_type, name = type(env).task_type, type(env).__name__
    check_vehicle(vehicle)
    signature = inspect.signature(task_type)
    known = [option for option in signature.parameters if option != 'vehicle']
    for option, closest in unknown_keys(known, options):
        hint = f' (did you mean {closest!r}?)' if closest else ''
        raise ValueError(f'{name}: unknown option {option!r}{hint}; the options are '
                         f'{", ".join(known)}')
    try:
        signature.bind(vehicle, *args, **options)
    except TypeError as err:  # a missing goal, one positional argument too many
        raise ValueError(f'{name}: {err}') from None
    return task_type(vehicle, *args, **options)


def _no_render_mode(env: object, options: dict[str, Any]) -> None:
    """Take ``render_mode`` out of ``options``: None, which Gymnasium's ``make`` and tools pass,
    is taken; these environments draw nothing (``render_modes`` is empty), so another value is a
    ValueError naming it."""
    mode = options.pop('render_mode', None)
    if mode is not None:
        raise ValueError(f'{type(env).__name__}: render_mode = {mode!r}: these environments draw '
                         'nothing (metadata render_modes is empty); give None or leave it out')


def _noise_seed(random: np.random.Generator) -> int:
    """A new vehicle's command-noise seed, drawn after its start pose."""
    return int(random.integers(2**63))


def _is_seed(value: Any) -> bool:
    """Whether ``value`` is a seed Gymnasium takes: an integer >= 0 (numpy's too), no bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) \
        and value >= 0


def _started(env: gym.Env | VectorEnv) -> None:
    """Gymnasium's ResetNeeded for a ``step`` before the first ``reset``."""
    if env._task.fleet is None:
        raise ResetNeeded(f'{type(env).__name__}: step() before reset(); call reset() first')


def _no_reset_options(env: gym.Env | VectorEnv, options: dict[str, Any] | None) -> None:
    """ValueError for ``reset`` options: these environments take none (an empty dict, as
    Gymnasium's ``check_env`` passes, is none)."""
    if options:
        raise ValueError(f'{type(env).__name__}.reset: options = {options!r}: this environment '
                         'takes no reset options (seed= seeds the start pose and the noise)')


def _spaces(task: Task) -> tuple[gym.spaces.Box, gym.spaces.Box]:
    """(action space, observation space) of one vehicle."""
    limit = np.array([np.pi if name.endswith('_rad') else np.inf for name in task.columns])
    return (gym.spaces.Box(-task.bounds, task.bounds, dtype=np.float64),
            gym.spaces.Box(-limit, limit, dtype=np.float64))


class _SingleEnv(gym.Env):
    """One vehicle doing a :class:`Task` of type ``task_type``."""

    metadata = {'render_modes': []}
    task_type: type[Task] = Task

    def __init__(self, vehicle: SimVehicle, *args: Any, **options: Any) -> None:
        _no_render_mode(self, options)
        self._task = _task(self, vehicle, args, options)
        self.action_space, self.observation_space = _spaces(self._task)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        _no_reset_options(self, options)
        if seed is not None and not _is_seed(seed):
            raise ValueError(f'{type(self).__name__}.reset: seed = {seed!r} must be an integer '
                             '>= 0 (numpy\'s too) or None (an unpredictable one)')
        super().reset(seed=None if seed is None else int(seed))
        pose = self._task.start_poses(self.np_random.uniform(-1.0, 1.0, (1, 2)))
        if seed is not None or self._task.fleet is None:
            self._task.restart(pose, None, (_noise_seed(self.np_random),))
        else:
            self._task.restart(pose, np.zeros(1, dtype=np.int64))
        return self._task.observe()[0], {}

    def step(self, action: ArrayLike
             ) -> tuple[NDArray[np.float64], float, bool, bool, dict[str, Any]]:
        _started(self)
        observations, rewards, terminated, truncated = self._task.step(
            action, self.action_space.shape)
        return (observations[0], float(rewards[0]), bool(terminated[0]), bool(truncated[0]),
                {})


class _BatchEnv(VectorEnv):
    """``num_envs`` vehicles doing a :class:`Task` of type ``task_type``, stepped together
    (autoreset: the module doc)."""

    metadata = {'render_modes': [], 'autoreset_mode': AutoresetMode.SAME_STEP}
    task_type: type[Task] = Task

    def __init__(self, vehicle: SimVehicle, num_envs: int, *args: Any, **options: Any
                 ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or num_envs < 1:
            raise ValueError(f'num_envs = {num_envs!r} must be an integer >= 1')
        self.num_envs = int(num_envs)
        _no_render_mode(self, options)
        self._task = _task(self, vehicle, args, options)
        self.single_action_space, self.single_observation_space = _spaces(self._task)
        with memory_for(f'num_envs = {self.num_envs}', 'the environments'):
            self.action_space = batch_space(self.single_action_space, self.num_envs)
            self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._randoms: list[np.random.Generator] = []

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None
              ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        _no_reset_options(self, options)
        seeds = self._seeds(seed)
        super().reset(seed=seeds[0] if seeds is not None and _is_seed(seed) else None)
        everyone = np.arange(self.num_envs)
        if seeds is not None or self._task.fleet is None:
            self._randoms = [seeding.np_random(None if seeds is None else seeds[i])[0]
                             for i in range(self.num_envs)]
            poses = self._start_poses(everyone)
            self._task.restart(poses, None, tuple(_noise_seed(random)
                                                  for random in self._randoms))
        else:  # as each single env: its generator and its noise go on
            self._task.restart(self._start_poses(everyone), everyone)
        return self._task.observe(), {}

    def step(self, actions: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                NDArray[np.bool_], NDArray[np.bool_],
                                                dict[str, Any]]:
        _started(self)
        observations, rewards, terminated, truncated = self._task.step(
            actions, self.action_space.shape)
        ended = terminated | truncated
        if not ended.any():
            return observations, rewards, terminated, truncated, {}
        done = np.flatnonzero(ended)
        final = np.full(self.num_envs, None, dtype=object)
        final[done] = list(observations[done])
        self._task.restart(self._start_poses(done), done)
        observations[done] = self._task.observe(done)
        # as gymnasium.vector.SyncVectorEnv gives them over envs whose infos are empty
        return (observations, rewards, terminated, truncated,
                {'final_obs': final, '_final_obs': ended, 'final_info': {},
                 '_final_info': ended.copy()})

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None] | None:
        """Each sub-environment's seed: ``seed + i`` for an int, the items of a list (one per
        sub-environment; a 1-D numpy array as its list, as ``simulate`` takes ``seeds``), None
        for None; numpy's integers as Python's. ValueError for a list of another length or a
        seed that is no integer >= 0 (a bool is not)."""
        if seed is None:
            return None
        if isinstance(seed, np.ndarray):  # its items, as Python's, on one line in an error
            seed = seed.tolist()
        if _is_seed(seed):
            return [int(seed) + i for i in range(self.num_envs)]
        if isinstance(seed, (str, bytes)) or not isinstance(seed, Sequence) \
                or len(seed) != self.num_envs \
                or not all(item is None or _is_seed(item) for item in seed):
            raise ValueError(f'{type(self).__name__}.reset: seed = {seed!r}: give one integer '
                             f'>= 0 (sub-environment i gets seed + i) or a list of '
                             f'{self.num_envs} such integers (one per sub-environment, None for '
                             'an unpredictable one)')
        return [None if item is None else int(item) for item in seed]

    def _start_poses(self, indices: NDArray[np.int64]) -> NDArray[np.float64]:
        return self._task.start_poses(
            np.concatenate([self._randoms[i].uniform(-1.0, 1.0, (1, 2)) for i in indices]))


class PathTrackingEnv(_SingleEnv):
    """Track a path with one vehicle: ``PathTrackingEnv(vehicle, path=None, **options)``
    (the module doc: spaces, reward, episodes, options)."""

    task_type = PathTask


class PathTrackingVectorEnv(_BatchEnv):
    """Track a path with ``num_envs`` vehicles (an integer >= 1) stepped together, a
    ``gymnasium.vector.VectorEnv``: ``PathTrackingVectorEnv(vehicle, num_envs, path=None,
    **options)`` (the module doc: spaces, reward, episodes, autoreset, options)."""

    task_type = PathTask


class GoalReachingEnv(_SingleEnv):
    """Reach a pose with one vehicle: ``GoalReachingEnv(vehicle, goal, **options)`` (the
    module doc: spaces, reward, episodes, options)."""

    task_type = GoalTask


class GoalReachingVectorEnv(_BatchEnv):
    """Reach a pose with ``num_envs`` vehicles (an integer >= 1) stepped together, a
    ``gymnasium.vector.VectorEnv``: ``GoalReachingVectorEnv(vehicle, num_envs, goal,
    **options)`` (the module doc: spaces, reward, episodes, autoreset, options)."""

    task_type = GoalTask
