"""The dynamic single-track (bicycle) model, compiled: lateral tyre slip, understeer, blending to
the kinematic bicycle at low speed.

Equations as the CommonRoad single-track model (Althoff and Wuersching, "CommonRoad: Vehicle
Models", ``vehicle_dynamics_st`` of ``commonroad-vehicle-models`` 3.0.2), generalised to a
steered axle behind the fixed one. Its longitudinal load transfer too: with the centre of mass
at height ``h`` (``dynamics.cg_height``, 0 by default) speeding up (``a = dv/dt > 0``) moves the
load ``a h / L`` from the axle ahead to the one behind, braking the other way; a load never goes
below 0 and the two always carry the weight (an axle lifting off leaves it all on the other;
CommonRoad lets a load go negative). Lateral load transfer moves load
between the left and right wheels of an axle, whose forces a single track adds: with forces
linear in the load and capped at ``mu F_z`` per axle it changes nothing, so it is not modelled
(a tyre whose stiffness falls with its load, which would make it count, is outside this model).

States: the speed ``v`` of the centre of mass G along its velocity [m/s, signed], the slip angle
``beta`` between that velocity and the body x axis [rad], the yaw rate ``r`` [rad/s]. Geometry
along the body x axis from G: the steered axle at ``a_s = s (L - d)``, the fixed axle at ``a_x =
-s d``, with ``L`` the wheel base, ``d`` the distance from the fixed axle to G, ``s = +1``
(steered axle ahead) or ``-1`` (behind). Per unit mass (the mass cancels but in the yaw inertia
``I``):

    normal loads        F_zs = (g d - s a h) / L,  F_zx = (g (L - d) + s a h) / L, the shift
                        s a h / L clamped so that each is >= 0 (they sum to g)
    slip angles         alpha_s = delta - beta - a_s r / v,   alpha_x = -beta - a_x r / v
    lateral forces      F_s = mu C_s F_zs alpha_s, F_x = mu C_x F_zx alpha_x,
                        each saturated at +-mu F_z (the tyre slides)
    dynamics            d beta / dt = (F_s + F_x) / v - r,
                        d r / dt    = (a_s F_s + a_x F_x) / (I / m)
    speed               d v / dt = -F_s sin(delta - beta) + F_x sin(beta) + the drive's,
                        all within the friction circle (:func:`tyre_terms`, stepping.py)

Beyond its linear range an axle's force is that of the wheel's true slip angle (from its
velocity across and along the wheel, right in a spin too), capped at ``mu F_z``, held over the
step and taken exactly: ``F_s cos(delta - beta)`` across G's velocity and ``a_s F_s cos(delta)``
of moment (``cos(beta)``, ``a_x F_x`` for the fixed axle), so that a slide's acceleration stays
within ``mu g`` with the speed's share.

Reversing (``v < 0``, ``beta`` still the angle of the velocity ``v (cos beta, sin beta)`` to the
body x axis, near 0): a tyre's lateral force opposes its lateral sliding, ``F = -mu C F_z (w +
a r - delta u) / |u|`` with ``(u, w)`` G's velocity in the body frame, which is
``sign(v) mu C F_z alpha`` with the slip angles above: the forces take the sign of the speed.
(CommonRoad's model divides by the signed speed and is unstable in reverse at any speed.) The
damping terms are then ``-mu C F_z / |v|`` in both directions; driving backwards the understeer
of a car becomes oversteer, ``r = v delta / (L + K v |v|)``, unstable only beyond
``|v| = sqrt(L / K)`` (tens of m/s for an understeering car). The slip angle is kept in
``(-pi, pi]``.

``C_s``, ``C_x`` [1/rad] are CommonRoad's normalised cornering stiffnesses (lateral force per
radian of slip angle per newton of normal load, at mu 1). Over one step, with ``v`` and ``delta``
held at their mid-step values and each saturated force held constant, this is linear in
``(beta, r)``; :func:`linear2_step` integrates it exactly (the matrix exponential), so the model
is stable at any step rate, however stiff the tyres are at low speed.

At low speed the tyre model is singular (``1 / v``); below ``blend_speed_low`` the model is the
kinematic bicycle seen from G, as CommonRoad's low-speed branch (``beta = atan(d tan(delta) /
L)``, ``r = v cos(beta) tan(delta) / (s L)``), above ``blend_speed_high`` the dynamic one, and
in between the derivatives are blended linearly in ``|v|``: ``w`` times the dynamic ones plus
``1 - w`` times a pull towards the kinematic values (time constant ``KINEMATIC_PULL_S``), still
linear in ``(beta, r)`` and integrated exactly, so the model is well defined at 0 m/s and its
steady states do not depend on the step rate (blending the states after each step would).

In steady state the linear model turns with ``r = v delta / (L + K v |v|)``, understeer
gradient ``K = (1 / C_s - 1 / C_x) / (mu g)`` [rad / (m/s^2)] for a front-steered vehicle.
"""

from __future__ import annotations

import math

from wheelsim.core.compiled import compiled
from wheelsim.core.vehicle.traction import GRAVITY_MPS2

TAYLOR_TERMS = 14  # of exp(A h) with |A h| <= 1/2: remainder below 1e-16
#: In the blend zone, the time constant of the kinematic share's pull of ``(beta, r)`` towards
#: the kinematic bicycle's values [s]: faster than the tyres there (a few tens of ms).
KINEMATIC_PULL_S = 0.002


@compiled
def linear2_step(
    a11: float, a12: float, a21: float, a22: float, b1: float, b2: float, x1: float, x2: float,
    dt: float,
) -> tuple[float, float]:
    """Exact solution after ``dt`` of ``x' = A x + b`` (2x2, constant) from ``(x1, x2)``.

    ``exp(A dt)`` and ``integral_0^dt exp(A t) dt b`` by scaling and squaring: a Taylor series
    for the step ``h = dt / 2^j`` with ``|A h| <= 1/2``, then ``j`` doublings of the step.
    """
    norm = max(abs(a11) + abs(a12), abs(a21) + abs(a22)) * dt
    doublings = 0
    while norm > 0.5:
        norm *= 0.5
        doublings += 1
    h = dt / 2.0 ** doublings
    m11, m12, m21, m22 = a11 * h, a12 * h, a21 * h, a22 * h
    t11, t12, t21, t22 = 1.0, 0.0, 0.0, 1.0  # (A h)^k / k!
    e11, e12, e21, e22 = 1.0, 0.0, 0.0, 1.0  # exp(A h)
    p11, p12, p21, p22 = 1.0, 0.0, 0.0, 1.0  # sum (A h)^k / (k + 1)!
    for k in range(1, TAYLOR_TERMS):
        t11, t12, t21, t22 = (
            (t11 * m11 + t12 * m21) / k, (t11 * m12 + t12 * m22) / k,
            (t21 * m11 + t22 * m21) / k, (t21 * m12 + t22 * m22) / k,
        )
        e11 += t11
        e12 += t12
        e21 += t21
        e22 += t22
        p11 += t11 / (k + 1)
        p12 += t12 / (k + 1)
        p21 += t21 / (k + 1)
        p22 += t22 / (k + 1)
    g1 = (p11 * b1 + p12 * b2) * h
    g2 = (p21 * b1 + p22 * b2) * h
    for _ in range(doublings):  # (E, g) for 2h from (E, g) for h: (E E, E g + g)
        g1, g2 = e11 * g1 + e12 * g2 + g1, e21 * g1 + e22 * g2 + g2
        e11, e12, e21, e22 = (
            e11 * e11 + e12 * e21, e11 * e12 + e12 * e22,
            e21 * e11 + e22 * e21, e21 * e12 + e22 * e22,
        )
    return e11 * x1 + e12 * x2 + g1, e21 * x1 + e22 * x2 + g2


@compiled
def kinematic_slip_and_yaw_rate(
    speed: float, steer: float, signed_wheel_base: float, cg_m: float
) -> tuple[float, float]:
    """``(beta, r)`` of the kinematic bicycle seen from G, ``cg_m`` from the fixed axle."""
    tan_steer = math.tan(steer)
    slip = math.atan(cg_m * tan_steer / abs(signed_wheel_base))
    return slip, speed * math.cos(slip) * tan_steer / signed_wheel_base


@compiled
def dynamic_weight(speed: float, low: float, high: float) -> float:
    """Share of the dynamic model at ``speed``: 0 below ``low``, 1 above ``high``, linear in
    between (a switch at ``low`` when ``low == high``)."""
    magnitude = abs(speed)
    if magnitude >= high:
        return 1.0
    if magnitude < low:
        return 0.0
    return (magnitude - low) / (high - low)


@compiled
def _axle(stiffness, load, mu, lever, steer, slip, yaw_rate, speed, gyration_sq):
    """One axle's terms of ``d(beta, r)/dt = A (beta, r) + b``: ``(a11, a12, a21, a22, b1, b2)``
    and its lateral force per unit mass now. ``lever``: the axle's position ahead of G.
    Reversing, the force follows the direction of travel: its gain takes the sign of the
    speed (see the module docstring)."""
    gain = math.copysign(mu * stiffness * load, speed)  # force per unit mass per radian
    cap = mu * load
    angle = steer - slip - lever * yaw_rate / speed
    if abs(gain * angle) <= cap:
        return (
            -gain / speed, -gain * lever / (speed * speed), -lever * gain / gyration_sq,
            -lever * lever * gain / (gyration_sq * speed), gain * steer / speed,
            lever * gain * steer / gyration_sq, gain * angle,
        )
    # Beyond the linear range the force is held over the step: at the limit, with the sign of
    # the linear range's slip angle (continuous with it), while the wheel rolls the way the
    # vehicle goes; in a spin, where it rolls the other way and small angles mean nothing, that
    # of its true slip angle, from its velocity across and along it (times v), within the
    # limit (both give the limit, with one sign, where the wheel moves sideways). Its share
    # across G's velocity and its moment are taken exactly (the linear range keeps CommonRoad's
    # small angles), so a slide's acceleration stays within mu g with the speed's share
    # (tyre_terms).
    along = math.cos(slip - steer) + math.sin(steer) * lever * yaw_rate / speed
    if along >= 0.0:
        force = math.copysign(cap, gain * angle)
    else:
        across = math.sin(slip - steer) + math.cos(steer) * lever * yaw_rate / speed
        force = -min(max(abs(gain) * math.atan2(speed * across, abs(speed * along)), -cap), cap)
    return (0.0, 0.0, 0.0, 0.0, force * math.cos(steer - slip) / speed,
            lever * force * math.cos(steer) / gyration_sq, force)


@compiled
def tyre_terms(
    speed: float, steer: float, slip: float, yaw_rate: float, signed_wheel_base: float,
    cg_m: float, stiffness_steered: float, stiffness_fixed: float, mu: float,
) -> tuple[float, float]:
    """What the tyres' lateral forces do to the speed of G, at ``speed`` (!= 0), without load
    transfer: ``(along, magnitude)`` [m/s^2], their component along G's velocity ``v (cos beta,
    sin beta)`` (the steered axle's force turned by ``steer``) and the size of their sum. In
    a slide ``along`` is the braking of the sliding tyres; in steady cornering it is the small
    drag of the slip angles, which the drive makes up for."""
    side = 1.0 if signed_wheel_base > 0.0 else -1.0
    base = abs(signed_wheel_base)
    steered = _axle(stiffness_steered, GRAVITY_MPS2 * cg_m / base, mu, side * (base - cg_m),
                    steer, slip, yaw_rate, speed, 1.0)[6]
    fixed = _axle(stiffness_fixed, GRAVITY_MPS2 * (base - cg_m) / base, mu, -side * cg_m, 0.0,
                  slip, yaw_rate, speed, 1.0)[6]
    along = -steered * math.sin(steer - slip) + fixed * math.sin(slip)
    magnitude = math.hypot(-steered * math.sin(steer), steered * math.cos(steer) + fixed)
    return along, magnitude


@compiled
def single_track_step(
    speed: float, steer: float, slip: float, yaw_rate: float, dt: float,
    signed_wheel_base: float, cg_m: float, stiffness_steered: float, stiffness_fixed: float,
    mu: float, gyration_sq: float, weight: float = 1.0, pitch_moment: float = 0.0,
) -> tuple[float, float, float]:
    """``(beta, r)`` after ``dt`` at constant ``speed`` (!= 0) and ``steer``, and the lateral
    acceleration [m/s^2] of G at the start of the step (the tyres' forces per unit mass).
    ``gyration_sq`` = I / m [m^2]. ``pitch_moment`` = (d v / dt) h [m^2/s^2], the longitudinal
    acceleration over the step times the centre of mass's height: it moves normal load from the
    axle ahead to the one behind (see the module docstring). ``weight`` < 1 (the blend zone):
    the derivatives are ``weight`` times the dynamic ones plus ``1 - weight`` times a pull
    towards the kinematic bicycle's ``(beta, r)`` at this speed and steering, at ``1 /
    KINEMATIC_PULL_S``."""
    side = 1.0 if signed_wheel_base > 0.0 else -1.0
    base = abs(signed_wheel_base)
    steered_load = GRAVITY_MPS2 * cg_m / base  # per unit mass, standing
    fixed_load = GRAVITY_MPS2 - steered_load
    # load moved onto the fixed axle, per unit mass: at most all of it (the two carry g)
    shift = min(max(side * pitch_moment / base, -fixed_load), steered_load)
    s11, s12, s21, s22, s1, s2, steered = _axle(
        stiffness_steered, steered_load - shift, mu,
        side * (base - cg_m), steer, slip, yaw_rate, speed, gyration_sq,
    )
    f11, f12, f21, f22, f1, f2, fixed = _axle(
        stiffness_fixed, fixed_load + shift, mu,
        -side * cg_m, 0.0, slip, yaw_rate, speed, gyration_sq,
    )
    a11, a12, a21, a22 = s11 + f11, s12 + f12 - 1.0, s21 + f21, s22 + f22
    b1, b2 = s1 + f1, s2 + f2
    if weight < 1.0:
        pull = (1.0 - weight) / KINEMATIC_PULL_S
        kinematic_slip, kinematic_yaw_rate = kinematic_slip_and_yaw_rate(
            speed, steer, signed_wheel_base, cg_m
        )
        a11, a12, a21, a22 = weight * a11 - pull, weight * a12, weight * a21, weight * a22 - pull
        b1, b2 = weight * b1 + pull * kinematic_slip, weight * b2 + pull * kinematic_yaw_rate
    new_slip, new_yaw_rate = linear2_step(a11, a12, a21, a22, b1, b2, slip, yaw_rate, dt)
    return new_slip, new_yaw_rate, steered + fixed
