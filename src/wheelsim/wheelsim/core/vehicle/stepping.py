"""The compiled stepping kernel: N vehicles of one model, K fixed steps, one call.

A vehicle is one row of three arrays, laid out by the column constants below:

- ``params`` (N, N_PARAMS): step period, actuator limits (no limit = inf, dead times in whole
  steps) and geometry, packed once from a :class:`VehicleConfig` by :func:`pack_params`;
- ``state`` (N, N_STATE): pose of base_link in map, body twist of base_link, the held command,
  actuator states, wheel joint angles and rates, and the steering joints' angles and rates
  (bicycle: the left and right steered wheels, from the steering angle by
  :func:`wheelsim.core.vehicle.kinematics.ackermann_angle`, written after every batch of steps);
- ``history`` (N, actuators, capacity): dead-time ring buffers, drives first, then steering.

Per step and vehicle: command at base_link -> command at the kinematic reference point R ->
wheel/steering references -> dead time -> actuators -> twist at R -> twist at base_link ->
exact SE(2) integration of the base_link pose -> wheel joints. base_link lies
``base_link_offset`` ahead of R on the body x axis, so both share the forward speed and turn
rate, and base_link's lateral speed is ``offset * wz`` plus R's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from wheelsim.core.compiled import compiled
from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import integrate_twist
from wheelsim.core.vehicle.actuators import (
    delay,
    limit_speed_change,
    proportional_scale,
    round_half_up,
    saturate,
    steering_step,
)
from wheelsim.core.vehicle.config import (
    BicycleConfig,
    DifferentialConfig,
    DriveActuatorConfig,
    OmniConfig,
    SteeringActuatorConfig,
    VehicleConfig,
)
from wheelsim.core.vehicle.imperfections import MASK32, imperfect_reference, normal_draws
from wheelsim.core.vehicle.kinematics import (
    ackermann_angle,
    ackermann_rate_factor,
    bicycle_references,
    bicycle_twist,
    differential_twist,
    differential_wheel_speeds,
    mecanum_twist,
    mecanum_wheel_speeds,
    steered_rolling_speed,
)
from wheelsim.core.vehicle.single_track import (
    dynamic_weight,
    kinematic_slip_and_yaw_rate,
    single_track_step,
    tyre_terms,
)
from wheelsim.core.vehicle.traction import GRAVITY_MPS2, friction_limited_twist

BICYCLE, DIFFERENTIAL, OMNI = 0, 1, 2
MODEL_CODES = {'bicycle': BICYCLE, 'differential': DIFFERENTIAL, 'omni': OMNI}
DRIVE_COUNT = {BICYCLE: 1, DIFFERENTIAL: 2, OMNI: 4}
ACTUATOR_COUNT = {BICYCLE: 2, DIFFERENTIAL: 2, OMNI: 4}
MAX_WHEELS = 4
ARRIVED_MPS = 1e-9  # proportional mecanum wheels this close to their commands take them
ROUNDING = 1e-6  # relative slack for comparisons against limits

# params columns, common
P_DT = 0
P_DRIVE_ALPHA = 1
P_DRIVE_VMAX = 2
P_DRIVE_ACC = 3
P_DRIVE_DEC = 4
P_DRIVE_JERK = 5
P_DRIVE_DELAY = 6
P_OFFSET = 7
P_RADIUS = 8
# model-specific geometry columns
P_BI_SIGNED_WHEEL_BASE = 9
P_BI_STEERED_DRIVE = 10
P_BI_HALF_TRACK_FIXED = 11
P_BI_HALF_TRACK_STEERED = 12
P_BI_STEER_ALPHA = 13
P_BI_STEER_MAX_POSITION = 14
P_BI_STEER_MAX_RATE = 15
P_BI_STEER_DELAY = 16
P_DI_HALF_TRACK = 9
P_DI_SLIP_LEFT = 10
P_DI_SLIP_RIGHT = 11
P_OM_LEVER = 9
P_OM_HALF_BASE = 10
P_OM_HALF_TRACK = 11
P_OM_PROPORTIONAL = 12
# command imperfections: a block of IMPERFECTION_COLUMNS per actuator kind, offsets below
P_DRIVE_IMPERFECTIONS = 17
P_STEER_IMPERFECTIONS = 22  # bicycle only
I_ANY, I_RESOLUTION, I_BIAS, I_NOISE, I_DEAD_BAND = 0, 1, 2, 3, 4  # I_ANY: 1.0 if any is set
IMPERFECTION_COLUMNS = 5
P_SEED_LOW = 27  # vehicle_sim's seed, low and high 32 bits (exact in a float)
P_SEED_HIGH = 28
P_FRICTION_LIMIT = 29  # mu g: the largest acceleration of R (m/s^2; inf = no limit)
# bicycle: the dynamic single-track model (core/vehicle/single_track.py)
P_BI_DYNAMIC = 30  # 1.0 when on
P_BI_CG = 31  # fixed axle to centre of mass (m)
P_BI_GYRATION_SQ = 32  # yaw inertia / mass (m^2)
P_BI_STIFFNESS_STEERED = 33  # normalised cornering stiffnesses (1/rad)
P_BI_STIFFNESS_FIXED = 34
P_BI_MU = 35
P_BI_BLEND_LOW = 36  # m/s
P_BI_BLEND_HIGH = 37
P_BI_CG_HEIGHT = 38  # m: longitudinal load transfer (0: none)
N_PARAMS = 39

# state columns
S_X, S_Y, S_YAW = 0, 1, 2
S_VX, S_VY, S_WZ = 3, 4, 5
S_CMD_VX, S_CMD_VY, S_CMD_WZ = 6, 7, 8
S_DRIVE_V = 9  # MAX_WHEELS columns: drive actuator speeds (m/s)
S_DRIVE_A = 13  # MAX_WHEELS columns: drive actuator accelerations (m/s^2)
S_STEER = 17  # steering actuator angle (rad), the virtual centre wheel
S_STEER_RATE = 18  # its rate (rad/s)
S_WHEEL_ANGLE = 19  # MAX_WHEELS columns (rad, wrapped)
S_WHEEL_RATE = 23  # MAX_WHEELS columns (rad/s)
S_STEERING_JOINT_ANGLE = 27  # 2 columns: steered wheels left, right (rad); bicycle only
S_STEERING_JOINT_RATE = 29  # 2 columns (rad/s)
S_STEER_REFERENCE = 31  # the steering reference last sent (rad): held with no command
S_SPEED_CG = 32  # single-track model: speed of the centre of mass along its velocity (m/s)
S_SLIP_CG = 33  # and its slip angle to the body x axis (rad)
N_STATE = 34


def _limit(value: float) -> float:
    """A configured limit with 0 ("no limit") turned into inf."""
    return math.inf if value == 0.0 else value


def _alpha(time_constant_s: float, dt: float) -> float:
    return 0.0 if time_constant_s == 0.0 else math.exp(-dt / time_constant_s)


def delay_steps(dead_time_s: float, dt: float) -> int:
    """Dead time in whole steps: ``dead_time / dt`` rounded half up (0.5 -> 1, 2.5 -> 3;
    :func:`round_half_up`: 0.0045 s at 1 kHz is 5 steps)."""
    return int(round_half_up(dead_time_s / dt))


def _pack_drive(row: np.ndarray, drive: DriveActuatorConfig, dt: float) -> None:
    row[P_DRIVE_ALPHA] = _alpha(drive.time_constant, dt)
    row[P_DRIVE_VMAX] = _limit(drive.max_velocity)
    row[P_DRIVE_ACC] = _limit(drive.max_acceleration)
    row[P_DRIVE_DEC] = _limit(drive.deceleration_limit)
    row[P_DRIVE_JERK] = _limit(drive.max_jerk)
    row[P_DRIVE_DELAY] = delay_steps(drive.dead_time, dt)


def _pack_imperfections(
    row: np.ndarray, column: int, actuator: DriveActuatorConfig | SteeringActuatorConfig
) -> None:
    values = (actuator.resolution, actuator.bias, actuator.noise_stddev, actuator.dead_band)
    row[column + I_ANY] = float(any(value != 0.0 for value in values))
    row[column + I_RESOLUTION] = actuator.resolution
    row[column + I_BIAS] = actuator.bias
    row[column + I_NOISE] = actuator.noise_stddev
    row[column + I_DEAD_BAND] = actuator.dead_band


def pack_params(config: VehicleConfig, dt: float, seed: int = 0) -> np.ndarray:
    """The kernel's parameter row for ``config`` at step period ``dt`` seconds; ``seed``
    (an integer in [0, 2^63)) seeds the command noise."""
    row = np.zeros(N_PARAMS)
    model = config.active
    row[P_DT] = dt
    row[P_SEED_LOW] = seed & MASK32
    row[P_SEED_HIGH] = seed >> 32
    _pack_imperfections(row, P_DRIVE_IMPERFECTIONS, config.drive)
    row[P_FRICTION_LIMIT] = _limit(model.friction_coefficient * GRAVITY_MPS2)
    row[P_OFFSET] = model.base_link_offset
    row[P_RADIUS] = model.wheel_radius_m
    _pack_drive(row, config.drive, dt)
    if isinstance(model, BicycleConfig):
        steering = model.steering_actuator
        row[P_BI_SIGNED_WHEEL_BASE] = model.signed_wheel_base_m
        row[P_BI_STEERED_DRIVE] = float(model.drive_on_steered_wheel)
        row[P_BI_HALF_TRACK_FIXED] = 0.5 * model.track_fixed_m
        row[P_BI_HALF_TRACK_STEERED] = 0.5 * model.track_steered_m
        row[P_BI_STEER_ALPHA] = _alpha(steering.time_constant, dt)
        row[P_BI_STEER_MAX_POSITION] = _limit(steering.max_position)
        row[P_BI_STEER_MAX_RATE] = _limit(steering.max_velocity)
        row[P_BI_STEER_DELAY] = delay_steps(steering.dead_time, dt)
        _pack_imperfections(row, P_STEER_IMPERFECTIONS, steering)
        dynamics = model.dynamics
        if dynamics.enabled:
            row[P_BI_DYNAMIC] = 1.0
            row[P_BI_CG] = model.cg_m
            row[P_BI_GYRATION_SQ] = model.gyration_sq_m2
            row[P_BI_STIFFNESS_STEERED] = dynamics.cornering_stiffness_steered
            row[P_BI_STIFFNESS_FIXED] = dynamics.cornering_stiffness_fixed
            row[P_BI_MU] = model.friction_coefficient
            row[P_BI_BLEND_LOW] = dynamics.blend_speed_low
            row[P_BI_BLEND_HIGH] = dynamics.blend_speed_high
            row[P_BI_CG_HEIGHT] = dynamics.cg_height
    elif isinstance(model, DifferentialConfig):
        row[P_DI_HALF_TRACK] = 0.5 * model.track
        row[P_DI_SLIP_LEFT] = model.slip_left
        row[P_DI_SLIP_RIGHT] = model.slip_right
    elif isinstance(model, OmniConfig):
        row[P_OM_LEVER] = model.lever_m
        row[P_OM_HALF_BASE] = 0.5 * model.wheel_base
        row[P_OM_HALF_TRACK] = 0.5 * model.track
        row[P_OM_PROPORTIONAL] = float(model.proportional_acceleration)
    return row


def pack_batch_params(configs: Sequence[VehicleConfig], dt: float,
                      seeds: Sequence[int]) -> np.ndarray:
    """The (N, :data:`N_PARAMS`) rows :func:`pack_params` gives for each configuration and seed
    (each seed an integer in [0, 2^63)); a configuration object given for many vehicles is
    packed once (a batch of N copies of one vehicle costs one packing, not N)."""
    rows: dict[int, np.ndarray] = {}  # id(config) -> its row without a seed
    packed = np.empty((len(configs), N_PARAMS))
    for i, config in enumerate(configs):
        row = rows.get(id(config))
        if row is None:
            row = rows[id(config)] = pack_params(config, dt)
        packed[i] = row
    seed_values = np.array(seeds, dtype=np.uint64).reshape(len(configs))
    packed[:, P_SEED_LOW] = seed_values & np.uint64(MASK32)
    packed[:, P_SEED_HIGH] = seed_values >> np.uint64(32)
    return packed


def delays_of(params: np.ndarray, model: int) -> np.ndarray:
    """Dead times in steps, (N, actuators): drives first, then the steering (bicycle)."""
    drive = params[:, P_DRIVE_DELAY].astype(np.int64)
    columns = [drive] * DRIVE_COUNT[model]
    if model == BICYCLE:
        columns.append(params[:, P_BI_STEER_DELAY].astype(np.int64))
    return np.stack(columns, axis=1)


@compiled
def _imperfect(p, column, reference, noise, actuator):
    """``reference`` after the command imperfections of the block at ``column`` (unchanged
    when none is set); ``noise = (draws, i)``: step ``i``'s normal draws by actuator (its
    history row) are ``draws[i]`` when any noise is set."""
    if p[column + I_ANY] == 0.0:
        return reference
    draws, i = noise
    draw = draws[i, actuator] if p[column + I_NOISE] > 0.0 else 0.0
    return imperfect_reference(
        reference, p[column + I_RESOLUTION], p[column + I_BIAS], p[column + I_NOISE],
        p[column + I_DEAD_BAND], draw,
    )


@compiled
def _drive_command(p, history, slot, noise, actuator, reference):
    """Drive reference after the command imperfections, the dead time and the saturation to
    +-max_velocity."""
    reference = _imperfect(p, P_DRIVE_IMPERFECTIONS, reference, noise, actuator)
    command = delay(history[actuator], slot, int(p[P_DRIVE_DELAY]), reference)
    return saturate(command, p[P_DRIVE_VMAX])


@compiled
def _drive(p, s, wheel, command, share, common_limit):
    """Low pass and limits of drive ``wheel``; ``share`` > 0 scales them (proportional mode)."""
    acc, dec, jerk = p[P_DRIVE_ACC], p[P_DRIVE_DEC], p[P_DRIVE_JERK]
    if share > 0.0:
        acc = dec = share * common_limit
        jerk = share * jerk
    v, a = limit_speed_change(
        s[S_DRIVE_V + wheel], s[S_DRIVE_A + wheel], command, p[P_DRIVE_ALPHA], p[P_DT], acc, dec,
        jerk, p[P_DRIVE_JERK],
    )
    s[S_DRIVE_V + wheel] = v
    s[S_DRIVE_A + wheel] = a


@compiled
def _on_the_ground(p, s, vx, vy, wz):
    """The twist at R the ground realises when the wheels ask for ``(vx, vy, wz)``: the same,
    or less within the friction circle (:mod:`.traction`)."""
    if p[P_FRICTION_LIMIT] == math.inf:
        return vx, vy, wz
    wz0 = s[S_WZ]  # the state holds base_link's twist: R's lateral speed is vy - offset * wz
    return friction_limited_twist(
        s[S_VX], s[S_VY] - p[P_OFFSET] * wz0, vx, vy, wz, p[P_DT], p[P_FRICTION_LIMIT]
    )


@compiled
def _single_track(p, s, steer_before, steer_after):
    """One step of the single-track model: updates G's speed and slip angle; returns the twist
    at R. The tyres' lateral forces brake G as far as they point against its velocity (a
    slide); the speed follows the drive within the friction they leave (spin and lock)."""
    dt = p[P_DT]
    signed_base = p[P_BI_SIGNED_WHEEL_BASE]
    cg = p[P_BI_CG]
    speed = s[S_SPEED_CG]
    slip = s[S_SLIP_CG]
    yaw_rate = s[S_WZ]
    limit_sq = p[P_FRICTION_LIMIT] ** 2
    drive = s[S_DRIVE_V]
    start_weight = dynamic_weight(speed, p[P_BI_BLEND_LOW], p[P_BI_BLEND_HIGH])
    if start_weight > 0.0:
        along, force = tyre_terms(
            speed, steer_before, slip, yaw_rate, signed_base, cg, p[P_BI_STIFFNESS_STEERED],
            p[P_BI_STIFFNESS_FIXED], p[P_BI_MU],
        )
        across_sq = force * force - along * along
        along *= start_weight
    else:  # kinematic: the turn cannot slide, and braking lessens it
        along = 0.0
        force = 0.0 if abs(drive) < abs(speed) or drive * speed < 0.0 else speed * yaw_rate
        across_sq = force * force
    # The drive adds to the tyres' share along the velocity what friction leaves them; the sum
    # stays within the circle that their share across it leaves.
    drive_budget = math.sqrt(max(limit_sq - force * force, 0.0)) * dt
    total_budget = math.sqrt(max(limit_sq - across_sq, 0.0)) * dt
    change = along * dt + min(max(drive - speed - along * dt, -drive_budget), drive_budget)
    new_speed = speed + min(max(change, -total_budget), total_budget)
    mid_speed = 0.5 * (speed + new_speed)
    weight = dynamic_weight(mid_speed, p[P_BI_BLEND_LOW], p[P_BI_BLEND_HIGH])
    if weight > 0.0:  # dynamic, or blended (single_track.py)
        new_slip, new_yaw_rate, _ = single_track_step(
            mid_speed, 0.5 * (steer_before + steer_after), slip, yaw_rate, dt, signed_base, cg,
            p[P_BI_STIFFNESS_STEERED], p[P_BI_STIFFNESS_FIXED], p[P_BI_MU], p[P_BI_GYRATION_SQ],
            weight, (new_speed - speed) / dt * p[P_BI_CG_HEIGHT],
        )
        new_slip = wrap_angle(new_slip)
    else:  # the kinematic bicycle
        new_slip, new_yaw_rate = kinematic_slip_and_yaw_rate(
            new_speed, steer_after, signed_base, cg
        )
    s[S_SPEED_CG] = new_speed
    s[S_SLIP_CG] = new_slip
    side = 1.0 if signed_base > 0.0 else -1.0
    vx = new_speed * math.cos(new_slip)
    return vx, new_speed * math.sin(new_slip) - side * cg * new_yaw_rate, new_yaw_rate


@compiled
def _cg_speed_factor(p, steer_reference):
    """Speed of G over the speed of R in the kinematic bicycle at the (clamped) steering
    reference: what the single-track model's drive is asked for, so that R goes at vx."""
    steer = saturate(steer_reference, p[P_BI_STEER_MAX_POSITION])
    return math.hypot(1.0, p[P_BI_CG] * math.tan(steer) / abs(p[P_BI_SIGNED_WHEEL_BASE]))


@compiled
def _step_bicycle(p, s, history, slot, noise):
    """One step of a bicycle; returns the twist at R (vx, vy, wz)."""
    signed_base = p[P_BI_SIGNED_WHEEL_BASE]
    steered_drive = p[P_BI_STEERED_DRIVE] > 0.5
    drive_ref, steer_ref = bicycle_references(
        s[S_CMD_VX], s[S_CMD_WZ], s[S_STEER], s[S_STEER_REFERENCE], signed_base, steered_drive,
        p[P_BI_STEER_MAX_POSITION],
    )
    s[S_STEER_REFERENCE] = steer_ref
    dynamic = p[P_BI_DYNAMIC] > 0.5
    if dynamic:
        drive_ref *= _cg_speed_factor(p, steer_ref)
    _drive(p, s, 0, _drive_command(p, history, slot, noise, 0, drive_ref), 0.0, 0.0)
    if p[P_STEER_IMPERFECTIONS + I_ANY] != 0.0:
        steer_ref = wrap_angle(_imperfect(p, P_STEER_IMPERFECTIONS, steer_ref, noise, 1))
    steer_in = delay(history[1], slot, int(p[P_BI_STEER_DELAY]), steer_ref)
    steering = steering_step(
        s[S_STEER], steer_in, p[P_BI_STEER_ALPHA], p[P_DT], p[P_BI_STEER_MAX_POSITION],
        p[P_BI_STEER_MAX_RATE],
    )
    steer_before = s[S_STEER]
    s[S_STEER_RATE] = wrap_angle(steering - steer_before) / p[P_DT]
    s[S_STEER] = steering
    sin_steer = math.sin(steering)
    cos_steer = math.cos(steering)
    if dynamic:
        ground_vx, ground_vy, ground_wz = _single_track(p, s, steer_before, steering)
        # the driven (fixed) wheels: rolling with the ground plus the drive's slip
        vx, wz = ground_vx + s[S_DRIVE_V] - s[S_SPEED_CG], ground_wz
    else:
        vx, wz = bicycle_twist(s[S_DRIVE_V], sin_steer, cos_steer, signed_base, steered_drive)
        ground_vx, ground_vy, ground_wz = _on_the_ground(p, s, vx, 0.0, wz)
    # Driven wheels turn as the drive makes them (the wheels' twist), the others roll with the
    # ground: they differ when the driven wheels spin or lock.
    fixed_vx, fixed_wz = (ground_vx, ground_wz) if steered_drive else (vx, wz)
    steered_vx, steered_vy, steered_wz = (vx, 0.0, wz) if steered_drive else (
        ground_vx, ground_vy, ground_wz)
    half_fixed = p[P_BI_HALF_TRACK_FIXED]
    half_steered = p[P_BI_HALF_TRACK_STEERED]
    radius = p[P_RADIUS]
    s[S_WHEEL_RATE] = (fixed_vx - fixed_wz * half_fixed) / radius
    s[S_WHEEL_RATE + 1] = (fixed_vx + fixed_wz * half_fixed) / radius
    for wheel, lateral in ((2, half_steered), (3, -half_steered)):
        speed = steered_rolling_speed(
            steered_vx, steered_vy, steered_wz, lateral, sin_steer, cos_steer, signed_base
        )
        s[S_WHEEL_RATE + wheel] = speed / radius
    return ground_vx, ground_vy, ground_wz


@compiled
def _step_differential(p, s, history, slot, noise):
    """One step of a differential drive; returns the twist at R (vx, vy, wz)."""
    half_track = p[P_DI_HALF_TRACK]
    left_ref, right_ref = differential_wheel_speeds(
        s[S_CMD_VX], s[S_CMD_WZ], half_track, p[P_DRIVE_VMAX]
    )
    _drive(p, s, 0, _drive_command(p, history, slot, noise, 0, left_ref), 0.0, 0.0)
    _drive(p, s, 1, _drive_command(p, history, slot, noise, 1, right_ref), 0.0, 0.0)
    left = s[S_DRIVE_V]
    right = s[S_DRIVE_V + 1]
    s[S_WHEEL_RATE] = left / p[P_RADIUS]
    s[S_WHEEL_RATE + 1] = right / p[P_RADIUS]
    vx, wz = differential_twist(left, right, p[P_DI_SLIP_LEFT], p[P_DI_SLIP_RIGHT], half_track)
    return _on_the_ground(p, s, vx, 0.0, wz)


@compiled
def _step_omni(p, s, history, slot, noise):
    """One step of a mecanum vehicle; returns the twist at R (vx, vy, wz)."""
    lever = p[P_OM_LEVER]
    wz_cmd = s[S_CMD_WZ]
    refs = mecanum_wheel_speeds(
        s[S_CMD_VX], s[S_CMD_VY] - p[P_OFFSET] * wz_cmd, wz_cmd, lever, p[P_DRIVE_VMAX]
    )
    commands = (
        _drive_command(p, history, slot, noise, 0, refs[0]),
        _drive_command(p, history, slot, noise, 1, refs[1]),
        _drive_command(p, history, slot, noise, 2, refs[2]),
        _drive_command(p, history, slot, noise, 3, refs[3]),
    )
    proportional = p[P_OM_PROPORTIONAL] > 0.5
    largest = 0.0
    fastest_change = 0.0
    for wheel in range(4):
        largest = max(largest, abs(commands[wheel] - s[S_DRIVE_V + wheel]))
        fastest_change = max(fastest_change, abs(s[S_DRIVE_A + wheel]))
    within_jerk = fastest_change <= p[P_DRIVE_JERK] * p[P_DT] * (1.0 + ROUNDING)
    if proportional and largest <= ARRIVED_MPS and within_jerk:
        # Rounding makes the wheels' tails differ at this scale: arrive together (stopping the
        # acceleration in one step is within the jerk limit).
        for wheel in range(4):
            s[S_DRIVE_V + wheel] = commands[wheel]
            s[S_DRIVE_A + wheel] = 0.0
            s[S_WHEEL_RATE + wheel] = commands[wheel] / p[P_RADIUS]
        vx, vy, wz = mecanum_twist(commands[0], commands[1], commands[2], commands[3], lever)
        return _on_the_ground(p, s, vx, vy, wz)
    common = math.inf
    if proportional and largest > 0.0:
        for wheel in range(4):
            share, limit = proportional_scale(
                s[S_DRIVE_V + wheel], commands[wheel], largest, p[P_DRIVE_ACC], p[P_DRIVE_DEC]
            )
            if share > 0.0:
                common = min(common, limit / share)
    for wheel in range(4):
        share = 0.0
        if proportional and largest > 0.0:
            share, _ = proportional_scale(
                s[S_DRIVE_V + wheel], commands[wheel], largest, p[P_DRIVE_ACC], p[P_DRIVE_DEC]
            )
        _drive(p, s, wheel, commands[wheel], share, common)
        s[S_WHEEL_RATE + wheel] = s[S_DRIVE_V + wheel] / p[P_RADIUS]
    vx, vy, wz = mecanum_twist(
        s[S_DRIVE_V], s[S_DRIVE_V + 1], s[S_DRIVE_V + 2], s[S_DRIVE_V + 3], lever
    )
    return _on_the_ground(p, s, vx, vy, wz)


@compiled
def _steering_joints(p, s):
    """Angles and rates of the left and right steered wheels' joints (bicycle): each points
    along its own velocity about the centre of rotation (equal for a single steered wheel)."""
    steering, rate = s[S_STEER], s[S_STEER_RATE]
    signed_base = p[P_BI_SIGNED_WHEEL_BASE]
    half_steered = p[P_BI_HALF_TRACK_STEERED]
    for side, lateral in ((0, half_steered), (1, -half_steered)):
        s[S_STEERING_JOINT_ANGLE + side] = ackermann_angle(steering, lateral, signed_base)
        s[S_STEERING_JOINT_RATE + side] = rate * ackermann_rate_factor(
            steering, lateral, signed_base
        )


@compiled
def _step_vehicle(model, n_steps, first_step, p, s, history):
    """``n_steps`` steps of one vehicle (one row of each array)."""
    dt = p[P_DT]
    offset = p[P_OFFSET]
    size = history.shape[1]
    slot = first_step % size  # ring-buffer slot of this step
    actuators = history.shape[0]
    if p[P_DRIVE_IMPERFECTIONS + I_NOISE] > 0.0 or p[P_STEER_IMPERFECTIONS + I_NOISE] > 0.0:
        noise = normal_draws(int(p[P_SEED_LOW]), int(p[P_SEED_HIGH]), first_step, n_steps,
                             actuators)
    else:
        noise = np.zeros((0, actuators))  # never read: no noise is set
    for i in range(n_steps):
        if model == BICYCLE:
            vx, vy, wz = _step_bicycle(p, s, history, slot, (noise, i))
        elif model == DIFFERENTIAL:
            vx, vy, wz = _step_differential(p, s, history, slot, (noise, i))
        else:
            vx, vy, wz = _step_omni(p, s, history, slot, (noise, i))
        slot = 0 if slot + 1 == size else slot + 1
        s[S_VX] = vx
        s[S_VY] = vy + offset * wz
        s[S_WZ] = wz
        s[S_X], s[S_Y], s[S_YAW] = integrate_twist(
            s[S_X], s[S_Y], s[S_YAW], s[S_VX], s[S_VY], wz, dt
        )
        for wheel in range(MAX_WHEELS):
            s[S_WHEEL_ANGLE + wheel] = wrap_angle(
                s[S_WHEEL_ANGLE + wheel] + s[S_WHEEL_RATE + wheel] * dt
            )
    if model == BICYCLE:
        _steering_joints(p, s)


@compiled
def step_serial(model, n_steps, first_step, params, state, history):
    """Step every vehicle ``n_steps`` times on this thread (cheapest for a few vehicles)."""
    for i in range(state.shape[0]):
        _step_vehicle(model, n_steps, first_step, params[i], state[i], history[i])


@compiled
def _step_to(model, step, done, first_step, params, state, history):
    """Step every vehicle from ``done`` steps to ``step`` (if later); returns the steps done."""
    if step > done:
        step_serial(model, step - done, first_step + done, params, state, history)
        return step
    return done


@compiled
def _hold(state, command):
    """Every vehicle holds ``command`` (vx, vy, wz) from now on."""
    for v in range(state.shape[0]):
        state[v, S_CMD_VX] = command[0]
        state[v, S_CMD_VY] = command[1]
        state[v, S_CMD_WZ] = command[2]


@compiled
def replay_serial(model, first_step, command_steps, commands, sample_steps, columns, params,
                  state, history, samples):
    """Step every vehicle on this thread through a schedule, as :func:`step_serial` and
    holding the commands in between would: every vehicle holds ``commands[i]`` (vx, vy, wz)
    from ``command_steps[i]`` on; ``samples[:, j]`` gets the state ``columns`` at
    ``sample_steps[j]``, read before a command of the same step is held. Both step arrays
    count from ``first_step`` and do not decrease. Returns the steps taken."""
    done = 0
    i = 0
    for j in range(sample_steps.shape[0]):
        while i < command_steps.shape[0] and command_steps[i] < sample_steps[j]:
            done = _step_to(model, command_steps[i], done, first_step, params, state, history)
            _hold(state, commands[i])
            i += 1
        done = _step_to(model, sample_steps[j], done, first_step, params, state, history)
        for v in range(state.shape[0]):
            for c in range(columns.shape[0]):
                samples[v, j, c] = state[v, columns[c]]
    while i < command_steps.shape[0]:
        done = _step_to(model, command_steps[i], done, first_step, params, state, history)
        _hold(state, commands[i])
        i += 1
    return done
