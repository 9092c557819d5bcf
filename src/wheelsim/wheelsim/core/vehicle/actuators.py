"""Actuator dynamics, one fixed step at a time, compiled: dead time, drive and steering chains.

Every function works on plain floats so the stepping kernel can call it for any number of
vehicles and wheels. Limits arrive with "no limit" already turned into ``inf``.

Drive chain (speeds in m/s, accelerations in m/s^2, jerk in m/s^3), in order:

1. dead time (:func:`delay`);
2. saturation to +-``v_max`` (:func:`saturate`);
3. first-order low pass, exactly discretised: the speed would become
   ``alpha * v + (1 - alpha) * u`` with ``alpha = exp(-dt / tau)``, i.e. it asks for the
   acceleration ``a_lp = (1 - alpha) * (u - v) / dt``;
4. acceleration limits (:func:`limit_speed_change`): ``acc`` while the speed magnitude grows,
   ``dec`` while it shrinks, and a jerk limit that turns speed steps into S-curves which land
   on the target without overshoot.
"""

from __future__ import annotations

import math

import numpy as np

from wheelsim.core.compiled import compiled, jitable
from wheelsim.core.geometry.angles import wrap_angle


@jitable  # compiled: a command's resolution; plain Python: a dead time in steps
def round_half_up(ratio: float) -> float:
    """``ratio`` (>= 0) rounded half up to a whole number (0.5 -> 1, 2.5 -> 3), as a float.

    The ratio is first rounded to 9 decimals, so a ratio meant as a half counts as one whatever
    the binary rounding of the division that gave it (0.0045 / 0.001 = 4.4999999999999991,
    0.35 / 0.1 = 3.4999999999999996). ``np.floor``: a float, also beyond the int64 range.
    """
    return np.floor(round(ratio, 9) + 0.5)


@compiled
def delay(history, write_slot: int, delay_steps: int, value: float) -> float:
    """Push ``value`` into a ring buffer and return the value pushed ``delay_steps`` steps ago.

    ``history`` (1-D, length > ``delay_steps``) starts filled with the initial output, so until
    enough steps have passed the initial value comes out. ``write_slot`` is the step count
    modulo the buffer length. A value entering at step k leaves at step k + delay_steps exactly.
    """
    history[write_slot] = value
    read_slot = write_slot - delay_steps
    if read_slot < 0:
        read_slot += history.shape[0]
    return history[read_slot]


@compiled
def saturate(value: float, limit: float) -> float:
    """``value`` clamped to [-limit, limit] (``limit`` may be inf)."""
    return min(max(value, -limit), limit)


@compiled
def landing_acceleration(gap: float, dt: float, jerk_step: float) -> tuple[float, bool]:
    """Acceleration now that reaches a speed ``gap`` (>= 0) away exactly, without overshoot.

    After this step the acceleration is ramped down to zero at the full jerk, ``jerk_step``
    (= jerk * dt) per step; the steps while it is still positive gain
    ``dt * sum_i max(a - i * jerk_step, 0)``. That gain is piecewise linear in ``a``, so the
    acceleration that lands exactly on ``gap`` is found in closed form. The flag says the gap
    is closed within this very step (no ramp needed).
    """
    if gap <= 0.0:
        return 0.0, True
    ramp_steps = 0
    if jerk_step < math.inf:
        q = gap / (dt * jerk_step)
        ramp_steps = int((math.sqrt(1.0 + 8.0 * q) - 1.0) / 2.0)
        while (ramp_steps + 1) * (ramp_steps + 2) / 2.0 <= q:
            ramp_steps += 1
        while ramp_steps > 0 and ramp_steps * (ramp_steps + 1) / 2.0 > q:
            ramp_steps -= 1
    if ramp_steps == 0:
        return gap / dt, True
    ramp_gain = dt * jerk_step * ramp_steps * (ramp_steps + 1) / 2.0
    return (gap + ramp_gain) / (dt * (ramp_steps + 1)), False


@compiled
def limit_speed_change(
    v: float, a: float, u: float, alpha: float, dt: float, acc: float, dec: float, jerk: float,
    recovery_jerk: float,
) -> tuple[float, float]:
    """One step of the low pass and the acceleration limits; returns the new ``(v, a)``.

    ``v`` is the speed, ``a`` the acceleration of the last step, ``u`` the saturated, delayed
    command. The acceleration chosen is the low pass's ``a_lp``, bounded by

    - ``acc`` when it makes ``|v|`` grow, ``dec`` when it makes ``|v|`` shrink;
    - ``a +- jerk * dt``;
    - the landing acceleration for ``u`` (never overshoot the command). When braking is
      stronger than accelerating (``dec > acc``) a reversal lands on zero first, so a hard brake
      never carries on as acceleration past zero.

    If the jerk window and the acceleration band do not meet (only after a live change of the
    limits, or when proportional scaling tightened them), the acceleration moves towards the
    band at ``recovery_jerk``.
    """
    a_lowpass = (1.0 - alpha) * (u - v) / dt
    goal = 0.0 if dec > acc and v * u < 0.0 else u
    gap = goal - v
    a_land, lands_now = landing_acceleration(abs(gap), dt, jerk * dt)
    a_land = math.copysign(a_land, gap)
    a_wanted = min(a_lowpass, a_land) if gap >= 0.0 else max(a_lowpass, a_land)
    if v > 0.0:
        band_low, band_high = -dec, acc
    elif v < 0.0:
        band_low, band_high = -acc, dec
    else:
        band_low, band_high = -acc, acc
    low = max(a - jerk * dt, band_low)
    high = min(a + jerk * dt, band_high)
    if low > high:
        step = recovery_jerk * dt
        a_new = max(a - step, band_high) if a > band_high else min(a + step, band_low)
    else:
        a_new = min(max(a_wanted, low), high)
    if a_new == a_wanted and a_wanted == a_land and lands_now:
        return goal, a_new
    if a_new == a_lowpass:
        return alpha * v + (1.0 - alpha) * u, a_new
    return v + a_new * dt, a_new


@compiled
def proportional_scale(
    v: float, u: float, largest_change: float, acc: float, dec: float
) -> tuple[float, float]:
    """``(share, limit)`` of one wheel for proportional acceleration across wheels.

    ``share = |u - v| / largest_change`` is this wheel's part of the common speed change; the
    wheel may use ``share * L`` where ``L`` is the smallest ``limit / share`` over the wheels,
    so all wheels keep their ratio and none exceeds its own limit. ``limit`` is ``acc`` if the
    wheel speeds up, ``dec`` if it slows down, and the smaller of both if it will reverse.
    """
    share = abs(u - v) / largest_change
    if v * u < 0.0:
        limit = min(acc, dec)
    elif abs(u) >= abs(v):
        limit = acc
    else:
        limit = dec
    return share, limit


@compiled
def steering_step(
    angle: float, reference: float, alpha: float, dt: float, max_position: float,
    max_rate: float,
) -> float:
    """Steering angle (rad) after one step towards ``reference`` (rad, delayed, in (-pi, pi]).

    Position limit (``max_position``, inf = turns all around), then the low pass on the
    difference and the rate limit ``max_rate`` (rad/s). An unlimited steering takes the shorter
    way round (wrapped difference); a limited one stays inside its range.
    """
    if max_position < math.inf:
        difference = saturate(reference, max_position) - angle
    else:
        difference = wrap_angle(reference - angle)
    change = saturate((1.0 - alpha) * difference, max_rate * dt)
    return wrap_angle(angle + change)
