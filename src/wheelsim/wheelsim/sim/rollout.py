"""``simulate`` a command sequence or ``rollout`` a policy: one vehicle or a batch, as arrays.

The physics is vehicle_sim's: the same kernel (:class:`~wheelsim.core.vehicle.model.
VehicleBatch`), stepped at ``step_rate`` (1 kHz by default), each command held from the step it
is given at (vehicle_sim applies a cmd_vel at the step where it arrives), commands (any finite
value) saturated to ``cmd_vel_limits`` as vehicle_sim saturates cmd_vel, and, with a map, the
footprint stopped at obstacles by the collision guard vehicle_sim steps through
(:class:`~wheelsim.core.world.guard.CollisionGuard`). A command is held for one control period
``dt_s``, a whole number of steps, and never goes stale: ``twist_reference_max_oldness`` is
not applied (vehicle_sim brakes once the last command is older than it, also between commands
sent further apart than it: the rollout equals vehicle_sim for a ``dt_s`` up to it).

Batches: one model and parameter set, N vehicles with their own start poses, commands and
seeds, stepped together in one compiled call per control period (vectorised; with a map, each
vehicle goes through its own collision guard, one after the other). Vehicle i of a batch gives
bit for bit what a single rollout with its start pose, commands and seed gives.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wheelsim.core.vehicle import stepping as st
from wheelsim.core.vehicle.command_types import body_twist, command_width
from wheelsim.core.vehicle.model import COMMAND_LIMIT, Vehicle, VehicleBatch, joint_columns
from wheelsim.core.world.guard import CollisionGuard
from wheelsim.report.metrics import distance_errors_rel
from wheelsim.sim.vehicle import SimVehicle, check_vehicle

#: The state a policy sees: base_link's pose in map and body twist, in this column order.
STATE_COLUMNS = ('x_m', 'y_m', 'yaw_rad', 'vx_mps', 'vy_mps', 'wz_radps')
_STATE_SOURCES = (st.S_X, st.S_Y, st.S_YAW, st.S_VX, st.S_VY, st.S_WZ)
Policy = Callable[[NDArray[np.float64], float], ArrayLike]


@dataclass(frozen=True, eq=False)  # compared and hashed by identity (arrays inside)
class Trajectory:
    """What a rollout did, sampled at every control period (``K`` periods, ``K + 1`` samples).
    Two trajectories are equal (``==``) only if they are the same object: compare their arrays
    (``np.testing.assert_array_equal``) for equal contents.

    A single rollout's arrays have the shapes below; a batch's have a leading axis of N
    vehicles (``x_m`` (N, K+1), ``wheel_speed_radps`` (N, K+1, W), ...), ``t_s`` excepted.

    - ``t_s`` (K+1,): time from the start [s]; sample k is at ``k * dt_s``.
    - ``x_m``, ``y_m``, ``yaw_rad`` (K+1,): base_link in map [m, rad, yaw in (-pi, pi]].
    - ``vx_mps``, ``vy_mps``, ``wz_radps`` (K+1,): base_link's body twist after the actuators.
    - ``wheel_speed_radps`` (K+1, W): wheel joint rates, ``joint_names[:W]`` order (as
      vehicle_sim's joint_states); times the wheel radius, the rim speed in m/s.
    - ``steering_rad`` (K+1, S): steering joint angles, ``joint_names[W:]`` order (S = 0 for
      differential and omni; 1 or 2 for the bicycle, with Ackermann angles for 2).
    - ``command`` (K, C): the commands as given (``command_type``), held from sample k to k+1.
    - ``command_twist`` (K, 3): the body twists they asked of the actuators (after
      ``cmd_vel_limits``): vx_mps, vy_mps, wz_radps; vy is 0 for differential and bicycle
      vehicles, which ignore it.
    - ``collisions``: collisions counted (an int, or (N,) ints); 0 without a map.
    """

    t_s: NDArray[np.float64]
    x_m: NDArray[np.float64]
    y_m: NDArray[np.float64]
    yaw_rad: NDArray[np.float64]
    vx_mps: NDArray[np.float64]
    vy_mps: NDArray[np.float64]
    wz_radps: NDArray[np.float64]
    wheel_speed_radps: NDArray[np.float64]
    steering_rad: NDArray[np.float64]
    command: NDArray[np.float64]
    command_twist: NDArray[np.float64]
    collisions: int | NDArray[np.int64]
    command_type: str
    joint_names: tuple[str, ...]

    @property
    def pose(self) -> NDArray[np.float64]:
        """(..., K+1, 3): x_m, y_m, yaw_rad stacked."""
        return np.stack([self.x_m, self.y_m, self.yaw_rad], axis=-1)

    def distance_errors_rel(self) -> dict[str, float | NDArray[np.float64]]:
        """How far the vehicle travelled against how far it was commanded, as ``wheelsim run``'s
        metrics of the same names (:func:`wheelsim.report.metrics.distance_errors_rel`):
        ``distance_error_rel`` (planar), ``distance_error_x_rel``, ``distance_error_y_rel``;
        floats (a batch: (N,) arrays), NaN where that axis was never commanded. As the metrics
        hold each 50 Hz sample, the velocity sampled at the start of each control period is
        held over it: for periods longer than the drive's response (dead time, time constant)
        the distance travelled is off (a 1 s period from rest counts as standing still), so
        compare figures with ``dt_s`` <= 0.02 s."""
        errors = distance_errors_rel(
            np.diff(self.t_s), self.vx_mps[..., :-1], self.vy_mps[..., :-1],
            self.command_twist[..., 0], self.command_twist[..., 1])
        return {name: float(value) if np.ndim(value) == 0 else value
                for name, value in errors.items()}

    def vehicle(self, index: int) -> Trajectory:
        """Vehicle ``index`` (an integer in [-N, N)) of a batch of N, as a single rollout's
        trajectory; ValueError for another index or a trajectory that is no batch."""
        if self.x_m.ndim != 2:
            raise ValueError('vehicle(index): this trajectory is not a batch')
        count = self.x_m.shape[0]
        try:  # an int, a numpy integer or a 0-d integer array; not a bool
            position = None if isinstance(index, (bool, np.bool_)) else operator.index(index)
        except TypeError:
            position = None
        if position is None or not -count <= position < count:
            raise ValueError(f'vehicle(index): index = {index!r} must be an integer in '
                             f'[{-count}, {count}) for this batch of {count}')
        index = position
        fields = {name: getattr(self, name)[index] for name in (
            'x_m', 'y_m', 'yaw_rad', 'vx_mps', 'vy_mps', 'wz_radps', 'wheel_speed_radps',
            'steering_rad', 'command', 'command_twist', 'collisions')}
        fields['collisions'] = int(fields['collisions'])
        return Trajectory(t_s=self.t_s, command_type=self.command_type,
                          joint_names=self.joint_names, **fields)


#: What a fleet holds besides its states, which a MemoryError names.
_FLEET_MEMORY = "the vehicles' commands in flight (their dead time's worth of steps)"


class _Fleet:
    """N vehicles of one :class:`SimVehicle`: one compiled batch, or with collisions one
    guarded :class:`Vehicle` each (the guard steps a single vehicle)."""

    def __init__(self, vehicle: SimVehicle, poses: NDArray[np.float64],
                 seeds: tuple[int, ...]) -> None:
        config, period_s = vehicle.config, vehicle.step_period_s
        self._vehicle = vehicle
        self._batch: VehicleBatch | None = None
        self._guarded: list[tuple[Vehicle, CollisionGuard]] = []
        if vehicle.collisions:
            self._guarded = [(Vehicle(config, period_s, tuple(pose), seed), self._guard())
                             for pose, seed in zip(poses, seeds, strict=True)]
        else:
            self._batch = VehicleBatch([config] * len(poses), period_s, poses, seeds)

    def _guard(self) -> CollisionGuard:
        return CollisionGuard(self._vehicle.world, self._vehicle.footprint)

    def states(self) -> NDArray[np.float64]:
        if self._batch is not None:
            return self._batch.states
        return np.stack([member.state_row() for member, _ in self._guarded])

    def set_commands(self, twists: NDArray[np.float64]) -> None:
        if self._batch is not None:
            self._batch.set_commands(twists)
            return
        for (member, _), twist in zip(self._guarded, twists, strict=True):
            member.set_command(*twist)

    def step(self, n_steps: int) -> None:
        if self._batch is not None:
            self._batch.step(n_steps)
            return
        for member, guard in self._guarded:
            guard.step(member, n_steps)

    def teleport(self, poses: NDArray[np.float64], indices: NDArray[np.int64]) -> None:
        """Vehicles ``indices`` at rest at (len(indices), 3) ``poses``, as if new (their
        command noise keeps counting the fleet's steps)."""
        if self._batch is not None:
            self._batch.teleport(poses, indices)
            return
        for index, pose in zip(indices, poses, strict=True):
            member = self._guarded[index][0]
            member.teleport(tuple(pose))
            self._guarded[index] = (member, self._guard())

    def collisions(self) -> NDArray[np.int64]:
        """(N,) collisions counted per vehicle (0 without collisions)."""
        if self._batch is not None:
            return np.zeros(self._batch.size, dtype=np.int64)
        return np.array([guard.collisions for _, guard in self._guarded], dtype=np.int64)


@contextlib.contextmanager
def memory_for(argument: str, what: str) -> Iterator[None]:
    """A MemoryError inside the block raised again naming ``argument`` (e.g. ``'n_steps =
    10'``) and ``what`` found no memory: numpy's names only the array's size and shape. So is
    numpy's ValueError or OverflowError for a shape larger than any array can be (the block
    only allocates)."""
    try:
        yield
    except (MemoryError, ValueError, OverflowError) as err:
        raise MemoryError(f'{argument}: no memory for {what} ({err})') from None


def real_number(value: Any) -> float:
    """``value`` as a float if it is one real number (a Python or numpy number, a 0-d array
    not masked, a Decimal, a Fraction, an object with ``__float__``; not a bool, text, complex
    or a sequence), else NaN (also for one too large for a float)."""
    if isinstance(value, (np.ndarray, np.generic)):  # numpy: by its dtype, 0-d only
        if value.ndim != 0 or value.dtype.kind not in 'iuf' or np.ma.is_masked(value):
            return math.nan  # no bool, text, complex or masked value
        value = value.item()
    if isinstance(value, (bool, str, bytes)):
        return math.nan
    try:
        return float(value) if np.ndim(value) == 0 else math.nan
    except (TypeError, ValueError, OverflowError):  # complex, ragged, too large, an object
        return math.nan


#: The longest control period a rollout or environment holds a command for [s].
MAX_PERIOD_S = 3600.0
#: How far from a whole number of physics steps a control period may be [steps]: float
#: rounding (a period read back from a time grid, ``3 * 0.1``, float32 arithmetic), never a
#: step's visible part.
WHOLE_STEPS_TOLERANCE = 0.01


def _steps_per_period(vehicle: SimVehicle, dt_s: float) -> int:
    """Physics steps in one control period of ``dt_s`` [s]; ValueError naming ``dt_s`` unless
    it is one real number (:func:`real_number`) at most :data:`MAX_PERIOD_S` and a whole number
    (>= 1) of steps, to :data:`WHOLE_STEPS_TOLERANCE` of a step (0.0015 s at 1 kHz is 1.5
    steps: refused; float32's 3000.0015 s, 3000001.46 steps: refused)."""
    step_rate = vehicle.settings.step_rate
    ratio = real_number(dt_s) * step_rate
    steps = round(ratio) if math.isfinite(ratio) and ratio < 2 * MAX_PERIOD_S * step_rate \
        else 0
    if steps < 1 or steps > MAX_PERIOD_S * step_rate \
            or abs(ratio - steps) > WHOLE_STEPS_TOLERANCE:
        raise ValueError(f'dt_s = {dt_s!r} must be a number of seconds in (0, '
                         f'{MAX_PERIOD_S:g}], a whole number (>= 1) of physics steps of '
                         f'{1.0 / step_rate:g} s (step_rate {step_rate:g} Hz), to '
                         f'{WHOLE_STEPS_TOLERANCE:g} of a step')
    return steps


def real_floats(values: ArrayLike, name: str, meaning: str) -> NDArray[np.float64]:
    """``values`` as an array of floats; ValueError naming ``name`` if they are not real
    numbers: no bool or text (numpy would convert both, a bool among numbers in a list too),
    no complex number (numpy would drop its imaginary part with a warning), no masked value
    (numpy would take the value under the mask)."""
    if np.ma.is_masked(values):
        raise ValueError(f'{name} must be an array of real numbers ({meaning}), none masked')
    try:
        array = np.asarray(values)
        if array.dtype.kind in 'iuf' and not _holds_bool(values, array.ndim) \
                or array.dtype.kind == 'O' and not any(
                    isinstance(value, (bool, np.bool_, str, bytes)) for value in array.flat):
            return array.astype(np.float64)
    except (TypeError, ValueError):
        pass
    raise ValueError(f'{name} must be an array of real numbers ({meaning})')


def _holds_bool(values: ArrayLike, ndim: int) -> bool:
    """Whether ``values`` (nested sequences of ``ndim`` levels, not an array of numbers) holds a
    bool, which numpy takes as 1 or 0 among numbers."""
    if isinstance(values, np.ndarray) or ndim == 0:
        return False  # an array of numbers holds none; a single bool is an array of bools
    items: Iterable[Any] = values  # type: ignore[assignment]
    for _ in range(ndim - 1):
        items = itertools.chain.from_iterable(items)
    return any(isinstance(item, (bool, np.bool_)) for item in items)


def _finite(values: ArrayLike, name: str, shape: tuple[int | None, ...], meaning: str,
            limit: float = COMMAND_LIMIT) -> NDArray[np.float64]:
    """``values`` as floats of ``shape`` (None: any length), finite, at most ``limit`` in
    magnitude (poses and options: COMMAND_LIMIT, as the core takes them; commands and actions:
    inf, any finite value, since they are saturated)."""
    array = real_floats(values, name, meaning)
    if array.ndim != len(shape) or any(
            n is not None and n != got for n, got in zip(shape, array.shape, strict=True)):
        wanted = str(tuple('any' if n is None else n for n in shape)).replace("'", '')
        raise ValueError(f'{name} must have shape {wanted} ({meaning}), got shape '
                         f'{array.shape}')
    if not np.all(np.isfinite(array) & (np.abs(array) <= limit)):
        raise ValueError(f'{name} must be finite' + (
            f' and at most {limit:g} in magnitude' if math.isfinite(limit) else ''))
    return array


def _start(vehicle: SimVehicle, x0: ArrayLike | None, count: int | None
           ) -> NDArray[np.float64]:
    """(N, 3) start poses: x0 is (3,) (every vehicle, or one) or (N, 3); None: the
    vehicle's ``initial_pose``. ``count``: N when known, None to take it from x0."""
    if x0 is None:
        pose = vehicle.settings.initial_pose
        x0 = (pose.x, pose.y, pose.yaw)
    x0 = real_floats(x0, 'x0', 'x_m, y_m, yaw_rad')
    if x0.ndim not in (1, 2):
        raise ValueError(f'x0 must have shape (3,) (x_m, y_m, yaw_rad) or (N, 3) (one per '
                         f'vehicle), got shape {x0.shape}')
    if x0.ndim == 1:
        return _finite(x0, 'x0', (3,), 'x_m, y_m, yaw_rad')[np.newaxis].repeat(count or 1, 0)
    poses = _finite(x0, 'x0', (count, 3), 'one x_m, y_m, yaw_rad per vehicle')
    _not_empty(poses, 'x0', '(N, 3)')
    return poses


def _not_empty(batch: NDArray[np.float64], name: str, form: str) -> None:
    """ValueError naming ``name`` for a batch of no vehicle."""
    if len(batch) == 0:
        raise ValueError(f'{name} must hold at least one vehicle: {form} with N >= 1, got '
                         f'shape {batch.shape}')


def _x0_is_batch(x0: ArrayLike | None) -> bool:
    """Whether ``x0`` is (N, 3) start poses, a batch (None and (3,) are one vehicle)."""
    return x0 is not None and real_floats(x0, 'x0', 'x_m, y_m, yaw_rad').ndim == 2


def _seeds(vehicle: SimVehicle, seeds: int | ArrayLike | None, count: int, batched: bool
           ) -> tuple[int, ...]:
    """The seed of each vehicle: ``seeds`` (one integer, or one per vehicle when ``batched``;
    none masked) or the vehicle's ``seed``; ValueError naming ``seeds`` and the range."""
    if seeds is None:
        return (vehicle.settings.seed,) * count
    array = np.asarray(seeds)
    taken = () if np.ma.is_masked(seeds) or array.shape != ((count,) if batched else ()) \
        or not np.issubdtype(array.dtype, np.integer) or _holds_bool(seeds, array.ndim) \
        else tuple(int(seed) for seed in array.reshape(-1))
    if not taken or not all(0 <= seed < 2**63 for seed in taken):
        wanted = f'{count} integers, one per vehicle,' if batched else 'one integer'
        raise ValueError(f'seeds must be {wanted} in [0, 2^63), none masked, got {seeds!r}')
    return taken


def _run(vehicle: SimVehicle, poses: NDArray[np.float64], seeds: tuple[int, ...],
         n_steps: int, dt_s: float, command_type: str, batched: bool,
         commands_at: Callable[[int, NDArray[np.float64]], NDArray[np.float64]]) -> Trajectory:
    """Step ``n_steps`` control periods; ``commands_at(k, states)`` gives the (N, C) commands
    of period k from the (N, 6) states (:data:`STATE_COLUMNS`) at its start."""
    if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 0:
        raise ValueError(f'n_steps = {n_steps!r} must be an integer >= 0')
    n_steps = int(n_steps)  # a numpy integer's n_steps + 1 could wrap around
    steps = _steps_per_period(vehicle, dt_s)
    joints = joint_columns(vehicle.config)
    columns = np.array(_STATE_SOURCES + joints.wheel_rates + joints.steering_angles)
    wheels = len(joints.wheel_rates)
    count = len(poses)
    limits = vehicle.settings.cmd_vel_limits
    limit = np.array([limits.linear, limits.linear, limits.angular])
    width = command_width(command_type, vehicle.model)
    with memory_for(f'n_steps = {n_steps} for {count} vehicle(s)', 'the trajectory'):
        record = np.empty((count, n_steps + 1, len(columns)))
        given = np.empty((count, n_steps, width))
        twists = np.empty((count, n_steps, 3))
    with memory_for(f'{count} vehicle(s)', _FLEET_MEMORY):
        fleet = _Fleet(vehicle, poses, seeds)
    record[:, 0] = fleet.states()[:, columns]
    sideways = vehicle.model == 'omni'  # differential and bicycle vehicles ignore vy
    for k in range(n_steps):
        given[:, k] = commands_at(k, record[:, k, :6])
        twist = body_twist(vehicle.config, command_type, given[:, k])  # finite, as given
        twists[:, k] = np.clip(twist, -limit, limit)
        if not sideways:
            twists[:, k, 1] = 0.0
        fleet.set_commands(twists[:, k])
        fleet.step(steps)
        record[:, k + 1] = fleet.states()[:, columns]
    trajectory = Trajectory(
        t_s=np.arange(n_steps + 1) * (steps * vehicle.step_period_s),
        **{name: record[:, :, i] for i, name in enumerate(STATE_COLUMNS)},
        wheel_speed_radps=record[:, :, 6:6 + wheels], steering_rad=record[:, :, 6 + wheels:],
        command=given, command_twist=twists, collisions=fleet.collisions(),
        command_type=command_type, joint_names=joints.names)
    return trajectory if batched else trajectory.vehicle(0)


def simulate(vehicle: SimVehicle, x0: ArrayLike | None, commands: ArrayLike, dt_s: float,
             *, command_type: str = 'twist', seeds: int | ArrayLike | None = None
             ) -> Trajectory:
    """Drive ``vehicle`` from rest at ``x0`` with a command sequence.

    ``commands``: (K, C) for one vehicle (or for each of N with an (N, 3) ``x0``), (N, K, C)
    for a batch of N; command k is held for
    ``dt_s`` from ``t = k * dt_s``; C and the meaning by ``command_type``
    (:mod:`wheelsim.core.vehicle.command_types`: ``'twist'`` (vx_mps, vy_mps, wz_radps),
    ``'wheel_speeds'`` rim speeds [m/s], ``'speed_steering'`` (speed_mps, steering_rad)).
    ``x0``: start pose (x_m, y_m, yaw_rad) of base_link in map, (3,) or (N, 3) for a batch;
    None: the vehicle's ``initial_pose``. ``dt_s``: a whole number of physics steps (1 ms at
    1 kHz). ``seeds``: the command-noise seed (an int, or (N,) ints), default the vehicle's
    ``seed``.

    Returns a :class:`Trajectory` of K + 1 samples. Raises ValueError naming the argument and
    the shape or range it must have.
    """
    width = command_width(command_type, check_vehicle(vehicle).model)
    meaning = f'{width} values of {command_type!r} per command'
    commands_batched = real_floats(commands, 'commands', meaning).ndim == 3
    shape = (None, None, width) if commands_batched else (None, width)
    commands = _finite(commands, 'commands', shape, meaning, math.inf)
    _check_steering(commands, 'commands', command_type)
    batched = commands_batched or _x0_is_batch(x0)
    if commands_batched:
        _not_empty(commands, 'commands', f'(N, K, {width})')
        poses = _start(vehicle, x0, commands.shape[0])
        batch_commands = commands
    else:  # one sequence: for one vehicle, or for each of the N of an (N, 3) x0
        poses = _start(vehicle, x0, None if batched else 1)
        batch_commands = np.broadcast_to(commands, (len(poses), *commands.shape))
    count = len(poses)
    return _run(vehicle, poses, _seeds(vehicle, seeds, count, batched), batch_commands.shape[1],
                dt_s, command_type, batched, lambda k, _states: batch_commands[:, k])


def _check_steering(commands: NDArray[np.float64], name: str, command_type: str) -> None:
    """ValueError naming ``name``, the first command's index and its value if a
    ``speed_steering`` command's steering angle is outside (-pi/2, pi/2) (a wheel across the
    direction of travel: no bicycle motion; refused, not saturated)."""
    if command_type != 'speed_steering':
        return
    outside = np.argwhere(~(np.abs(commands[..., 1]) < 0.5 * math.pi))
    if len(outside):
        index = tuple(int(i) for i in outside[0])
        at = f' at index {index if len(index) > 1 else index[0]}' if index else ''
        raise ValueError(f'{name}: steering_rad must be in (-pi/2, pi/2), got '
                         f'{commands[(*index, 1)]:g}{at}')


def _check_policy(policy: Any) -> None:
    """Raise ValueError unless ``policy`` is a callable that takes ``(state, t_s)`` (by its
    signature, where Python gives one)."""
    if not callable(policy):
        raise ValueError(f'policy must be a callable policy(state, t_s), got {policy!r}')
    try:
        signature = inspect.signature(policy)
    except (TypeError, ValueError):  # a callable without one (some built-ins): called as it is
        return
    try:
        signature.bind(np.zeros(len(STATE_COLUMNS)), 0.0)
    except TypeError as err:
        name = getattr(policy, '__name__', type(policy).__name__)
        raise ValueError(f'policy {name}{signature} cannot be called as policy(state, t_s) '
                         f'({err})') from None


def rollout(vehicle: SimVehicle, x0: ArrayLike | None, policy: Policy, n_steps: int,
            dt_s: float, *, command_type: str = 'twist', seeds: int | ArrayLike | None = None
            ) -> Trajectory:
    """Drive ``vehicle`` from rest at ``x0`` with a feedback policy for ``n_steps`` periods.

    ``x0``: (3,) (x_m, y_m, yaw_rad) for one vehicle, (N, 3) for a batch of N (None: the
    vehicle's ``initial_pose``, one vehicle). At ``t_s = k * dt_s`` the policy is called as
    ``policy(state, t_s)`` with ``state`` the (6,) or (N, 6) array of :data:`STATE_COLUMNS`
    (base_link's pose in map and body twist, measured exactly) and returns one command (C,)
    or (N, C) of ``command_type``, held for ``dt_s``. ``seeds`` and the rest as
    :func:`simulate`. Raises ValueError naming the argument (``policy(state, t_s)`` for a bad
    return value) and the shape or range it must have.
    """
    check_vehicle(vehicle)
    _check_policy(policy)
    batched = _x0_is_batch(x0)
    poses = _start(vehicle, x0, None if batched else 1)
    count = len(poses)
    width = command_width(command_type, vehicle.model)
    shape = (count, width) if batched else (width,)
    period_s = _steps_per_period(vehicle, dt_s) * vehicle.step_period_s

    def commands_at(k: int, states: NDArray[np.float64]) -> NDArray[np.float64]:
        state = states.copy() if batched else states[0].copy()
        command = _finite(policy(state, k * period_s), 'policy(state, t_s)', shape,
                          f'{width} values of {command_type!r} per vehicle', math.inf)
        _check_steering(command, f'policy(state, t_s) at t_s = {k * period_s:g}', command_type)
        return command.reshape(count, width)

    return _run(vehicle, poses, _seeds(vehicle, seeds, count, batched), n_steps, dt_s,
                command_type, batched, commands_at)
