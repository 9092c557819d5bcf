"""Vehicles to step: :class:`VehicleBatch` (N vehicles of one model) and :class:`Vehicle` (one).

Both drive the same compiled kernel (:mod:`wheelsim.core.vehicle.stepping`). A command is the body
twist of base_link (vx, vy in m/s, wz in rad/s), held until changed. Steps have a fixed period.
Poses are base_link in map (x, y in m, yaw in rad, in (-pi, pi]); twists are base_link's body
twist after the actuator dynamics. Commands must be finite and at most ``COMMAND_LIMIT`` in
magnitude; anything else raises ``ValueError`` and the held command stays as it was, so no
NaN or inf ever reaches the state. The only randomness (command noise, when configured) is
keyed by each vehicle's seed and the step count: runs repeat bit for bit.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wheelsim.core.compiled import direct_call
from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.params import to_flat
from wheelsim.core.vehicle import stepping as st
from wheelsim.core.vehicle.config import VEHICLE_PARAM_SPECS, VehicleConfig
from wheelsim.core.vehicle.joints import wheel_layout

COMMAND_LIMIT = 1e6
#: A :meth:`VehicleBatch.step` call of at least this many vehicle-steps (vehicles x steps: about
#: half a millisecond on one core) spreads the vehicles over every core
#: (:mod:`.parallel_stepping`); a smaller one runs on the calling thread, where starting and
#: joining the threads would cost more than they save (BENCHMARKS.md, "Python API").
PARALLEL_FROM_VEHICLE_STEPS = 5_000
SEED_LIMIT = 2**63  # seeds are integers in [0, SEED_LIMIT), as vehicle_sim's seed parameter
_READ_ONLY = frozenset(spec.name for spec in VEHICLE_PARAM_SPECS if spec.read_only)
#: State columns of motion: the body twist, drive speeds and accelerations, the steering rate,
#: wheel rates, steering joint rates and the single-track model's speed and slip angle (zeroed
#: by :meth:`VehicleBatch.stop`).
_MOTION_COLUMNS = np.r_[st.S_VX:st.S_WZ + 1, st.S_DRIVE_V:st.S_STEER, st.S_STEER_RATE,
                        st.S_WHEEL_RATE:st.S_WHEEL_RATE + st.MAX_WHEELS,
                        st.S_STEERING_JOINT_RATE:st.S_STEERING_JOINT_RATE + 2,
                        st.S_SPEED_CG, st.S_SLIP_CG]


def _range_error(what: str, values: Sequence[float], row: int, limit: float) -> ValueError:
    return ValueError(
        f'{what} {list(values)} (row {row}) must be finite and at most {limit:g} in magnitude'
    )


def _finite_rows(values: ArrayLike, rows: int, what: str, limit: float) -> NDArray[np.float64]:
    array = np.array(values, dtype=np.float64).reshape(rows, 3)
    good = np.abs(array) <= limit  # False for NaN and inf too
    if not good.all():
        row = int(np.argwhere(~good)[0][0])
        raise _range_error(what, array[row].tolist(), row, limit)
    return array


def _steps_array(steps: ArrayLike, name: str) -> NDArray[np.int64]:
    """``steps`` as int64, checked: whole numbers >= 0 that do not decrease."""
    array = np.asarray(steps)
    if array.ndim != 1 or (array.size and (
            not np.issubdtype(array.dtype, np.number) or array.dtype.kind == 'b'
            or not np.all(np.isfinite(array)) or np.any(array != np.round(array)))):
        raise ValueError(f'{name} must be a 1-D array of whole numbers of steps')
    array = array.astype(np.int64)
    bad = np.flatnonzero(np.diff(array) < 0)
    if array.size and array[0] < 0:
        raise ValueError(f'{name}[0] = {array[0]}: steps must be >= 0')
    if bad.size:
        k = int(bad[0]) + 1
        raise ValueError(f'{name}[{k}] = {array[k]} is before {name}[{k - 1}] = '
                         f'{array[k - 1]}: steps must not decrease')
    return array


def _checked_seeds(seeds: Sequence[int] | None, count: int) -> tuple[int, ...]:
    if seeds is None:
        return (0,) * count
    seeds = tuple(seeds)
    if len(seeds) != count:
        raise ValueError(f'expected {count} seeds, got {len(seeds)}')
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not (
            0 <= seed < SEED_LIMIT
        ):
            raise ValueError(f'seed {seed!r} must be an integer in [0, 2^63)')
    return tuple(int(seed) for seed in seeds)


def _picker(columns: Sequence[int]) -> Callable[[Sequence[float]], tuple[float, ...]]:
    """A function returning the values at ``columns`` of a sequence, as a tuple."""
    if not columns:
        return lambda values: ()
    if len(columns) == 1:  # itemgetter returns a bare value for one index
        column = columns[0]
        return lambda values: (values[column],)
    return operator.itemgetter(*columns)


def _read_only_changes(old: VehicleConfig, new: VehicleConfig) -> list[str]:
    before, after = to_flat(old), to_flat(new)
    prefix = f'model_params.{old.model}.'
    return [
        name for name in sorted(_READ_ONLY)
        if (name == 'model' or name.startswith(prefix)) and before[name] != after[name]
    ]


class VehicleBatch:
    """N vehicles of one model, possibly with different parameters, stepped together.

    It calls its kernel's machine code directly (:func:`wheelsim.core.compiled.direct_call`),
    which cannot be pickled: copy a batch with ``copy.deepcopy``, or rebuild it."""

    def __init__(
        self,
        configs: Sequence[VehicleConfig],
        step_period_s: float,
        poses: ArrayLike | None = None,
        seeds: Sequence[int] | None = None,
    ) -> None:
        """``seeds``: one per vehicle (default 0), for its command noise (see
        :mod:`wheelsim.core.vehicle.imperfections`)."""
        if not configs:
            raise ValueError('a vehicle batch needs at least one configuration')
        models = {config.model for config in configs}
        if len(models) != 1:
            raise ValueError(f'all vehicles of a batch must share one model, got {sorted(models)}')
        if not (math.isfinite(step_period_s) and step_period_s > 0.0):
            raise ValueError(f'step_period_s = {step_period_s!r} must be a finite number > 0')
        self.model = configs[0].model
        self.step_period_s = float(step_period_s)
        self._code = st.MODEL_CODES[self.model]
        self._configs = tuple(configs)
        self._seeds = _checked_seeds(seeds, len(configs))
        self._params = self._packed(configs)
        count = len(configs)
        start = np.zeros((count, 3)) if poses is None else _finite_rows(poses, count, 'pose', 1e9)
        self._start = start.copy()
        self._start[:, 2] = [wrap_angle(yaw) for yaw in start[:, 2]]
        self._state = np.zeros((count, st.N_STATE))  # written in place only, never replaced
        self._history = np.zeros((count, st.ACTUATOR_COUNT[self._code], self._capacity()))
        self._elapsed = 0
        # Called without numba's dispatch: the arrays are always C-ordered float64 ones of
        # these dimensions (the history and parameters are replaced by such arrays only).
        self._kernel = self._direct(st.step_serial)
        self._parallel_kernel: Callable | None = None  # at the first call large enough
        self.reset()

    @property
    def size(self) -> int:
        """Number of vehicles."""
        return self._state.shape[0]

    @property
    def configs(self) -> tuple[VehicleConfig, ...]:
        return self._configs

    @property
    def seeds(self) -> tuple[int, ...]:
        return self._seeds

    @property
    def elapsed_steps(self) -> int:
        """Steps taken since construction or :meth:`reset`."""
        return self._elapsed

    @property
    def poses(self) -> NDArray[np.float64]:
        """(N, 3) x_m, y_m, yaw_rad of base_link in map (a copy)."""
        return self._state[:, st.S_X:st.S_YAW + 1].copy()

    @property
    def twists(self) -> NDArray[np.float64]:
        """(N, 3) vx_mps, vy_mps, wz_radps of base_link in base_link (a copy)."""
        return self._state[:, st.S_VX:st.S_WZ + 1].copy()

    @property
    def commands(self) -> NDArray[np.float64]:
        """(N, 3) the held commands (a copy)."""
        return self._state[:, st.S_CMD_VX:st.S_CMD_WZ + 1].copy()

    def set_commands(self, commands: ArrayLike) -> None:
        """Hold (N, 3) base_link body twists (vx_mps, vy_mps, wz_radps) as the commands.

        Raises ValueError, changing nothing, if any value is non-finite or above COMMAND_LIMIT.
        Bicycle and differential vehicles cannot move sideways: their vy is ignored.
        """
        rows = _finite_rows(commands, self.size, 'command', COMMAND_LIMIT)
        self._state[:, st.S_CMD_VX:st.S_CMD_WZ + 1] = rows

    def set_command(self, index: int, command: tuple[float, float, float]) -> None:
        """Hold one vehicle's command, checked as by :meth:`set_commands`. Plain float
        comparisons instead of array operations: a node calls this for every message."""
        if not all(abs(value) <= COMMAND_LIMIT for value in command):  # False for NaN too
            raise _range_error('command', command, index, COMMAND_LIMIT)
        self._state[index, st.S_CMD_VX:st.S_CMD_WZ + 1] = command

    def step(self, n_steps: int) -> None:
        """Advance every vehicle by ``n_steps`` fixed steps with the held commands."""
        if n_steps < 0 or int(n_steps) != n_steps:
            raise ValueError(f'n_steps = {n_steps!r} must be a whole number >= 0')
        if n_steps == 0:
            return
        kernel = self._kernel
        if self.size > 1 and self.size * n_steps >= PARALLEL_FROM_VEHICLE_STEPS:
            if self._parallel_kernel is None:  # imported here: it imports numba
                from wheelsim.core.vehicle.parallel_stepping import step_parallel
                self._parallel_kernel = self._direct(step_parallel)
            kernel = self._parallel_kernel
        kernel(self._code, int(n_steps), self._elapsed, self._params, self._state, self._history)
        self._elapsed += int(n_steps)

    def _direct(self, kernel: Callable) -> Callable:
        """``kernel``'s machine code for this batch's arrays (:func:`direct_call`)."""
        return direct_call(kernel, self._code, 1, self._elapsed, self._params, self._state,
                           self._history)

    def replay(self, command_steps: ArrayLike, commands: ArrayLike, sample_steps: ArrayLike,
               state_columns: ArrayLike) -> NDArray[np.float64]:
        """Step through a schedule of commands on this thread and return the states sampled
        on the way: what :meth:`step` and :meth:`set_commands` give, bit for bit, called step
        by step, in one compiled call.

        Every vehicle holds ``commands[i]`` (vx_mps, vy_mps, wz_radps) from step
        ``command_steps[i]`` on (the last one given for a step wins); at step
        ``sample_steps[j]`` the state columns ``state_columns`` (:mod:`.stepping`) are read,
        before a command of the same step is held. Steps count from now; both step arrays are
        whole numbers >= 0 that do not decrease. The batch ends at the latest step of either.
        Returns (N, len(sample_steps), len(state_columns)).

        Raises ValueError naming the argument, changing nothing, for a step array that is not
        whole, negative or decreasing, ``commands`` not of shape (len(command_steps), 3) or
        with a value :meth:`set_commands` refuses, or a column outside [0, N_STATE).
        """
        command_steps = _steps_array(command_steps, 'command_steps')
        sample_steps = _steps_array(sample_steps, 'sample_steps')
        commands = np.asarray(commands, dtype=np.float64)
        if commands.shape != (len(command_steps), 3):
            raise ValueError(f'commands has shape {commands.shape}: expected '
                             f'({len(command_steps)}, 3), one row per command step')
        commands = _finite_rows(commands, len(commands), 'command', COMMAND_LIMIT)
        columns = np.asarray(state_columns)
        if columns.ndim != 1 or columns.dtype.kind not in 'iu' or (
                len(columns) and (columns.min() < 0 or columns.max() >= st.N_STATE)):
            raise ValueError(f'state_columns {columns.tolist()} must be whole numbers in '
                             f'[0, {st.N_STATE})')
        samples = np.empty((self.size, len(sample_steps), len(columns)))
        self._elapsed += int(st.replay_serial(
            self._code, self._elapsed, command_steps, commands, sample_steps,
            columns.astype(np.int64), self._params, self._state, self._history, samples))
        return samples

    @property
    def states(self) -> NDArray[np.float64]:
        """(N, N_STATE) the kernel states of every vehicle (a copy; columns in
        :mod:`.stepping`)."""
        return self._state.copy()

    def state_row(self, index: int) -> NDArray[np.float64]:
        """The kernel state of one vehicle (a copy; columns in :mod:`.stepping`)."""
        return self._state[index].copy()

    def state_view(self, index: int) -> NDArray[np.float64]:
        """The kernel state of one vehicle, a view that follows every later step."""
        return self._state[index]

    def snapshot(self) -> BatchSnapshot:
        """Everything :meth:`step` changes, to go back to with :meth:`restore`."""
        return BatchSnapshot(self._state.copy(), self._history.copy(), self._elapsed)

    def restore(self, snapshot: BatchSnapshot) -> None:
        """Back to the moment of ``snapshot`` (taken from this batch), keeping the present
        configuration: taken before a live change to a longer dead time, the commands in flight
        are those the snapshot holds, older ones its oldest (as :meth:`apply_configs` grows
        them). ValueError for a snapshot of another batch's shape."""
        history = snapshot.history
        if (np.shape(snapshot.state) != self._state.shape or np.ndim(history) != 3
                or np.shape(history)[:2] != self._history.shape[:2]):
            raise ValueError(f'snapshot: state {np.shape(snapshot.state)} and history '
                             f'{np.shape(history)} are not of this batch (state '
                             f'{self._state.shape}, history {self._history.shape[:2]} + (steps,))')
        self._state[:] = snapshot.state
        # a C-ordered float64 copy, whatever the snapshot holds: the kernel reads it unchecked
        self._history = np.array(history, dtype=np.float64, order='C')
        self._elapsed = snapshot.elapsed
        if self._history.shape[2] < (capacity := self._capacity()):
            self._history = self._grown_history(capacity)

    def stop(self, index: int, pose: tuple[float, float, float] | None = None) -> None:
        """Stop one vehicle where it is, or back at ``pose``: its body twist, actuator speeds
        and accelerations, steering rate and joint rates become zero (a contact stops it).
        The pose (unless given), steering angle, wheel angles, held command and the commands
        in flight are kept, so it drives on as commanded from the next step."""
        row = self._state[index]
        if pose is not None:
            x, y, yaw = _finite_rows([pose], 1, 'pose', 1e9)[0]
            row[st.S_X], row[st.S_Y], row[st.S_YAW] = x, y, wrap_angle(yaw)
        row[_MOTION_COLUMNS] = 0.0

    def teleport(self, poses: ArrayLike, indices: ArrayLike | None = None) -> None:
        """Put vehicles at new poses at rest: actuators zeroed, histories cleared.

        ``poses`` is (N, 3), or (len(indices), 3) for the vehicles ``indices`` (the others are
        untouched, e.g. to restart some episodes of a learning batch). The held commands and
        the step count are kept.
        """
        chosen = np.arange(self.size) if indices is None else np.asarray(indices, dtype=np.int64)
        rows = _finite_rows(poses, len(chosen), 'pose', 1e9)
        commands = self._state[chosen, st.S_CMD_VX:st.S_CMD_WZ + 1]
        self._state[chosen] = 0.0
        self._state[chosen, st.S_X:st.S_YAW + 1] = rows
        self._state[chosen, st.S_YAW] = [wrap_angle(yaw) for yaw in rows[:, 2]]
        self._state[chosen, st.S_CMD_VX:st.S_CMD_WZ + 1] = commands
        self._history[chosen] = 0.0

    def reset(self) -> None:
        """Back to the construction poses with everything zeroed, commands included."""
        self._state[:] = 0.0
        self._state[:, st.S_X:st.S_YAW + 1] = self._start
        self._history[:] = 0.0
        self._elapsed = 0

    def clear_histories(self) -> None:
        """Forget the commands in flight (after a backward time jump); the pose is kept.

        Each dead-time queue is refilled with the value it is putting out now, so the actuators
        hold their present command for one dead time, then follow new commands.
        """
        if self._elapsed == 0:
            return
        delays = st.delays_of(self._params, self._code)
        capacity = self._history.shape[2]
        vehicles, actuators = np.indices(delays.shape)
        current = self._history[vehicles, actuators, (self._elapsed - 1 - delays) % capacity]
        self._history[:] = current[:, :, np.newaxis]

    def apply_configs(self, configs: Sequence[VehicleConfig]) -> None:
        """Change actuator parameters live, keeping the state.

        Raises ValueError if the model or any read-only (geometry) parameter differs. A longer
        dead time outputs the commands that entered that much longer ago; history older than
        the queue remembers is taken as its oldest remembered value.
        """
        if len(configs) != self.size:
            raise ValueError(f'expected {self.size} configurations, got {len(configs)}')
        for old, new in zip(self._configs, configs, strict=True):
            changed = _read_only_changes(old, new)
            if changed:
                raise ValueError(f'cannot change read-only parameters while running: {changed}')
        self._configs = tuple(configs)
        self._params = self._packed(configs)
        capacity = self._capacity()
        if capacity > self._history.shape[2]:
            self._history = self._grown_history(capacity)

    def _packed(self, configs: Sequence[VehicleConfig]) -> NDArray[np.float64]:
        return st.pack_batch_params(configs, self.step_period_s, self._seeds)

    def _capacity(self) -> int:
        return int(st.delays_of(self._params, self._code).max()) + 1

    def _grown_history(self, capacity: int) -> NDArray[np.float64]:
        old_capacity = self._history.shape[2]
        k = self._elapsed
        times = np.arange(k - capacity, k)
        oldest_known = k - old_capacity
        source = np.maximum(times, oldest_known) % old_capacity
        grown = np.empty(self._history.shape[:2] + (capacity,))
        grown[:, :, times % capacity] = self._history[:, :, source]
        return grown


class BatchSnapshot(NamedTuple):
    """A copy of a batch's changing arrays (:meth:`VehicleBatch.snapshot`)."""

    state: NDArray[np.float64]
    history: NDArray[np.float64]
    elapsed: int


class VehicleState(NamedTuple):
    """Everything observable about one vehicle after a step.

    Pose of base_link in map (m, rad); body twist of base_link (m/s, rad/s); joint positions
    (rad, wrapped to (-pi, pi]) and velocities (rad/s) in ``Vehicle.joint_names`` order;
    ``steering_angles_rad``: the steering joints' angles (left/right Ackermann wheels, or the
    single steered wheel; empty for differential and omni). A named tuple of plain floats: the
    node builds one per publication, so it must be cheap.
    """

    x_m: float
    y_m: float
    yaw_rad: float
    vx_mps: float
    vy_mps: float
    wz_radps: float
    joint_positions_rad: tuple[float, ...]
    joint_velocities_radps: tuple[float, ...]
    steering_angles_rad: tuple[float, ...]
    elapsed_steps: int


class JointColumns(NamedTuple):
    """Where a vehicle's joints are in its kernel state (columns of :mod:`.stepping`).

    ``names``: the wheel joints in :func:`~wheelsim.core.vehicle.joints.wheel_layout` order,
    then the steering joints (left, right, or the single one), as ``joint_states`` lists them;
    ``positions`` and ``velocities``: their angle [rad] and rate [rad/s] columns in that order;
    ``wheel_rates``: the wheel joints' rate columns only; ``steering_angles``: the steering
    joints' angle columns only.
    """

    names: tuple[str, ...]
    positions: tuple[int, ...]
    velocities: tuple[int, ...]
    wheel_rates: tuple[int, ...]
    steering_angles: tuple[int, ...]


def joint_columns(config: VehicleConfig) -> JointColumns:
    """The joints of ``config``'s vehicle and their state columns."""
    wheels = wheel_layout(config)
    steering = tuple(w.steering for w in wheels if w.steering is not None)
    sides = range(len(steering))
    steering_angles = tuple(st.S_STEERING_JOINT_ANGLE + i for i in sides)
    wheel_rates = tuple(st.S_WHEEL_RATE + w.column for w in wheels)
    return JointColumns(
        names=tuple(w.joint for w in wheels) + tuple(s.joint for s in steering),
        positions=tuple(st.S_WHEEL_ANGLE + w.column for w in wheels) + steering_angles,
        velocities=wheel_rates + tuple(st.S_STEERING_JOINT_RATE + i for i in sides),
        wheel_rates=wheel_rates,
        steering_angles=steering_angles,
    )


class Vehicle:
    """One simulated vehicle: command in, fixed steps, full state out. Deterministic."""

    def __init__(
        self,
        config: VehicleConfig,
        step_period_s: float,
        pose: tuple[float, float, float] = (0.0, 0.0, 0.0),
        seed: int = 0,
    ) -> None:
        """``seed`` seeds the command noise (vehicle_sim's ``seed``)."""
        self._batch = VehicleBatch([config], step_period_s, [pose], [seed])
        columns = joint_columns(config)
        self.joint_names: tuple[str, ...] = columns.names
        self._steering_angles = _picker(columns.steering_angles)
        self._positions = _picker(columns.positions)
        self._velocities = _picker(columns.velocities)
        self._row = self._batch.state_view(0)

    @property
    def config(self) -> VehicleConfig:
        return self._batch.configs[0]

    @property
    def step_period_s(self) -> float:
        return self._batch.step_period_s

    def set_command(self, vx_mps: float, vy_mps: float, wz_radps: float) -> None:
        """Hold the body twist of base_link as the command (see the module docstring)."""
        self._batch.set_command(0, (float(vx_mps), float(vy_mps), float(wz_radps)))

    def step(self, n_steps: int) -> None:
        """Advance ``n_steps`` fixed steps with the held command, inside compiled code."""
        self._batch.step(n_steps)

    @property
    def pose(self) -> tuple[float, float, float]:
        """Pose of base_link in map: x_m, y_m, yaw_rad."""
        row = self._row
        return float(row[st.S_X]), float(row[st.S_Y]), float(row[st.S_YAW])

    @property
    def twist(self) -> tuple[float, float, float]:
        """Body twist of base_link in base_link: vx_mps, vy_mps, wz_radps."""
        row = self._row
        return float(row[st.S_VX]), float(row[st.S_VY]), float(row[st.S_WZ])

    @property
    def command(self) -> tuple[float, float, float]:
        """The held command (:meth:`set_command`): vx_mps, vy_mps, wz_radps."""
        row = self._row
        return float(row[st.S_CMD_VX]), float(row[st.S_CMD_VY]), float(row[st.S_CMD_WZ])

    def snapshot(self) -> BatchSnapshot:
        """See :meth:`VehicleBatch.snapshot`."""
        return self._batch.snapshot()

    def restore(self, snapshot: BatchSnapshot) -> None:
        """See :meth:`VehicleBatch.restore`."""
        self._batch.restore(snapshot)

    def stop(self, pose: tuple[float, float, float] | None = None) -> None:
        """Stop where it is, or back at ``pose`` (see :meth:`VehicleBatch.stop`)."""
        self._batch.stop(0, pose)

    def state(self) -> VehicleState:
        row = self._row.tolist()
        return VehicleState(
            row[st.S_X], row[st.S_Y], row[st.S_YAW], row[st.S_VX], row[st.S_VY], row[st.S_WZ],
            self._positions(row), self._velocities(row), self._steering_angles(row),
            self._batch.elapsed_steps,
        )

    def state_row(self) -> NDArray[np.float64]:
        """The kernel state (a copy; columns in :mod:`.stepping`)."""
        return self._batch.state_row(0)

    def teleport(self, pose: tuple[float, float, float]) -> None:
        """New pose at rest: velocities and actuator states zeroed, histories cleared."""
        self._batch.teleport([pose])

    def reset(self) -> None:
        """Back to the construction pose, everything zeroed."""
        self._batch.reset()

    def clear_histories(self) -> None:
        """Forget the commands in flight (see :meth:`VehicleBatch.clear_histories`)."""
        self._batch.clear_histories()

    def apply_config(self, config: VehicleConfig) -> None:
        """Live change of actuator parameters; ValueError for model or geometry changes."""
        self._batch.apply_configs([config])
