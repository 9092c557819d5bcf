"""Wheel kinematics of the three models, compiled: body twist <-> wheel speeds and angles.

Frames: every twist here is expressed at the model's kinematic reference point R, in body
axes (x forward, y left, z up): the fixed-axle midpoint (bicycle), the wheel-axle midpoint
(differential) or the centre of the four wheels (omni). base_link sits ``base_link_offset``
ahead of R on the body x axis; :mod:`wheelsim.core.vehicle.stepping` moves twists between the two.
Speeds are in m/s (wheel rim / ground), turn rates in rad/s, angles in rad.
"""

from __future__ import annotations

import math

from wheelsim.core.compiled import compiled, jitable
from wheelsim.core.geometry.angles import wrap_angle


@compiled
def differential_wheel_speeds(
    vx: float, wz: float, half_track: float, v_max: float
) -> tuple[float, float]:
    """Left and right rim speeds for a forward speed and turn rate, turn rate first.

    If a wheel would exceed ``v_max`` (inf = no limit) the forward speed gives way so the turn
    rate is kept; only a turn rate that alone needs more than ``v_max`` is reduced (to
    ``v_max / half_track``, spinning in place).
    """
    turn = half_track * wz
    if abs(turn) > v_max:
        turn = math.copysign(v_max, turn)
        vx = 0.0
    else:
        vx = max(min(vx, v_max - abs(turn)), abs(turn) - v_max)
    return vx - turn, vx + turn


@compiled
def differential_twist(
    left: float, right: float, slip_left: float, slip_right: float, half_track: float
) -> tuple[float, float]:
    """Forward speed and turn rate from rim speeds; each wheel's ground speed loses its slip."""
    ground_left = left * (1.0 - slip_left)
    ground_right = right * (1.0 - slip_right)
    return 0.5 * (ground_left + ground_right), (ground_right - ground_left) / (2.0 * half_track)


@compiled
def mecanum_wheel_speeds(
    vx: float, vy: float, wz: float, lever: float, v_max: float
) -> tuple[float, float, float, float]:
    """Rim speeds (front-left, front-right, rear-left, rear-right) for a body twist.

    ``lever`` = (wheel_base + track) / 2. Rollers at 45 degrees in X layout. If one wheel
    would exceed ``v_max`` all four are scaled by the same factor, so the direction of travel
    and the ratio of translation to rotation are kept.
    """
    turn = lever * wz
    front_left = vx - vy - turn
    front_right = vx + vy + turn
    rear_left = vx + vy - turn
    rear_right = vx - vy + turn
    largest = max(abs(front_left), abs(front_right), abs(rear_left), abs(rear_right))
    scale = v_max / largest if largest > v_max else 1.0
    return front_left * scale, front_right * scale, rear_left * scale, rear_right * scale


@compiled
def mecanum_twist(
    front_left: float, front_right: float, rear_left: float, rear_right: float, lever: float
) -> tuple[float, float, float]:
    """Body twist from the four rim speeds (least squares; exact for consistent speeds)."""
    vx = 0.25 * (front_left + front_right + rear_left + rear_right)
    vy = 0.25 * (-front_left + front_right + rear_left - rear_right)
    wz = 0.25 * (-front_left + front_right - rear_left + rear_right) / lever
    return vx, vy, wz


@compiled
def bicycle_references(
    vx: float, wz: float, steering: float, last_reference: float, signed_wheel_base: float,
    steered_drive: bool, max_position: float,
) -> tuple[float, float]:
    """Drive speed and steering angle that realise a forward speed and turn rate.

    ``signed_wheel_base`` is +wheel_base (steered axle ahead of R) or -wheel_base (behind).
    The steered axle moves with (vx, signed_wheel_base * wz), so the steering angle is its
    direction. The wheel may instead point the opposite way with the drive reversed; of the two
    the one inside ``max_position`` is taken, and if both are, the one the steering reaches
    sooner from its present angle ``steering``: by the wrapped distance when it turns all
    around (``max_position`` inf), by the plain distance when it is limited (it never passes
    +-pi). If neither is, the one that keeps the sign of vx is taken (the steering actuator
    clamps it to +-max_position). With no command the steering holds ``last_reference`` (the
    angle it was last sent to) and the drive stops.

    Fixed-axle drive: the drive speed is vx whichever way the wheel points. Steered drive: the
    wheel's speed along its direction, ``+-hypot(vx, L wz)``; when the angle is clamped,
    ``vx / cos(clamped angle)``, so vx is kept as with fixed-axle drive (a spin command at full
    lock does not drive the vehicle forward).
    """
    lateral = signed_wheel_base * wz
    if vx == 0.0 and lateral == 0.0:
        return 0.0, last_reference
    ahead = math.atan2(lateral, vx)
    behind = wrap_angle(ahead + math.pi)
    ahead_fits = abs(ahead) <= max_position
    behind_fits = abs(behind) <= max_position
    if ahead_fits and behind_fits:
        if max_position < math.inf:
            use_behind = abs(behind - steering) < abs(ahead - steering)
        else:
            use_behind = abs(wrap_angle(behind - steering)) < abs(wrap_angle(ahead - steering))
    elif ahead_fits or behind_fits:
        use_behind = behind_fits
    else:
        use_behind = abs(behind) < abs(ahead)
        if steered_drive:  # neither fits, so max_position < pi/2: the clamped wheel keeps vx
            angle = behind if use_behind else ahead
            return vx / math.cos(max_position), angle
    angle = behind if use_behind else ahead
    if not steered_drive:
        return vx, angle
    speed = math.hypot(vx, lateral)
    return (-speed if use_behind else speed), angle


@compiled
def bicycle_twist(
    drive: float, sin_steer: float, cos_steer: float, signed_wheel_base: float,
    steered_drive: bool,
) -> tuple[float, float]:
    """Forward speed and turn rate at R from the drive speed and the steering angle's sin/cos."""
    if steered_drive:
        return drive * cos_steer, drive * sin_steer / signed_wheel_base
    return drive, drive * sin_steer / (cos_steer * signed_wheel_base)


@jitable  # also called from Python: the joints' limits of a launch file's URDF
def ackermann_angle(steering: float, lateral_m: float, signed_wheel_base: float) -> float:
    """Angle of a steered wheel ``lateral_m`` left of the steered axle's midpoint.

    ``steering`` is the virtual centre wheel's angle; each real wheel points along its own
    velocity about the same instantaneous centre of rotation, so none of them slides sideways:
    ``tan(angle) = sin(steering) / (cos(steering) - lateral_m * sin(steering) / wheel_base)``.
    """
    sin_steer = math.sin(steering)
    return math.atan2(sin_steer, math.cos(steering) - lateral_m * sin_steer / signed_wheel_base)


@compiled
def ackermann_rate_factor(steering: float, lateral_m: float, signed_wheel_base: float) -> float:
    """d(ackermann_angle) / d(steering): turns the steering rate into the wheel's rate."""
    sin_steer = math.sin(steering)
    along = math.cos(steering) - lateral_m * sin_steer / signed_wheel_base
    return 1.0 / (along * along + sin_steer * sin_steer)


@compiled
def steered_rolling_speed(
    vx: float, vy: float, wz: float, lateral_m: float, sin_steer: float, cos_steer: float,
    signed_wheel_base: float,
) -> float:
    """Ground speed along its heading of the steered wheel ``lateral_m`` left of the axle middle,
    for the twist ``(vx, vy, wz)`` at R (``vy`` is 0 unless the tyres slip sideways).

    Same heading as :func:`ackermann_angle`, taken as a direction vector (no trigonometry).
    """
    along = cos_steer - lateral_m * sin_steer / signed_wheel_base
    length = math.hypot(along, sin_steer)
    return ((vx - wz * lateral_m) * along + (vy + wz * signed_wheel_base) * sin_steer) / length
