"""The dynamic single-track bicycle against CommonRoad's single-track model, the field's reference
implementation (``commonroad-vehicle-models`` 3.0.2, a test dependency): the same car, the same
inputs, both integrated at 1 kHz, and the largest differences over a manoeuvre. Used by the
tests (test_vehicle_single_track.py) and bench/bench_reference.py.

Units: positions m, angles rad, speeds m/s, yaw rates rad/s, accelerations m/s^2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from vehiclemodels.parameters_vehicle2 import parameters_vehicle2
from vehiclemodels.vehicle_dynamics_st import vehicle_dynamics_st

from wheelsim.core.vehicle import stepping as st
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle

#: 12 s of sine steering while speeding up from 12 to 20 m/s and braking to 8 m/s, as
#: :func:`commonroad_comparison` takes a manoeuvre (braking limit 3 m/s^2).
SINE_STEERING = (12.0, [(t / 20.0 + 0.05, 20.0 if t < 100 else 8.0,
                         0.25 * math.sin(2 * math.pi * t / 80.0) / 12.0) for t in range(240)],
                 12.0)


@dataclass(frozen=True)
class TurnChange:
    """A steady turn of ``radius_m`` at ``start_mps``, then 4 s towards ``end_mps`` at
    ``rate_mps2`` (the drive's acceleration or braking limit) on the same radius."""

    name: str
    start_mps: float
    end_mps: float
    radius_m: float
    rate_mps2: float

    @property
    def manoeuvre(self) -> tuple:
        """As :func:`commonroad_comparison` takes it."""
        curvature = 1.0 / self.radius_m
        return (self.start_mps, [(1.0, self.start_mps, curvature),
                                 (5.0, self.end_mps, curvature)], 5.0)


#: The load-transfer manoeuvres: braking hard in a wide turn (the rear axle loses 40 % of its
#: load), braking in a tighter turn, speeding up in a turn (load onto the rear axle).
LOAD_TRANSFER = (TurnChange('braking-hard', 20.0, 5.0, 250.0, 8.0),
                 TurnChange('braking', 20.0, 5.0, 100.0, 5.0),
                 TurnChange('speeding-up', 10.0, 20.0, 100.0, 3.0))


def single_track(dt: float = 1e-3, **leaves) -> Vehicle:
    """A dynamic bicycle (2.6 m wheel base, mu 1) stepped every ``dt`` s; ``leaves`` set
    ``model_params.bicycle.*`` parameters (``__`` for a dot)."""
    values = {
        'model': 'bicycle',
        'model_params.bicycle.wheel_base': 2.6,
        'model_params.bicycle.friction_coefficient': 1.0,
        'model_params.bicycle.vis_track_steered': 0.0,
        'model_params.bicycle.dynamics.enabled': True,
        'model_params.bicycle.drive_actuator.max_velocity': 40.0,
        'model_params.bicycle.steering_actuator.max_position': 1.0,
    }
    values.update({f'model_params.bicycle.{k.replace("__", ".")}': v for k, v in leaves.items()})
    return Vehicle(vehicle_config_from_params(values), dt)


def row(vehicle: Vehicle) -> np.ndarray:
    """The stepping state row of ``vehicle``'s one vehicle (:mod:`wheelsim.core.vehicle.stepping`
    columns)."""
    return vehicle._batch.state_row(0)


def commonroad_vehicle(height: bool = False):
    """CommonRoad's vehicle 2 (a BMW 320i), with its centre of mass on the ground (no load
    transfer) unless ``height`` (its 0.61 m); its ST model uses one normalised cornering
    stiffness for both axles, -p_ky1 / p_dy1."""
    p = parameters_vehicle2()
    if not height:
        p.h_s = 0.0
    return p


def rk4(f, x, u, p, dt, substeps=4):
    h = dt / substeps
    x = np.asarray(x, dtype=float)
    for _ in range(substeps):
        k1 = np.asarray(f(x, u, p))
        k2 = np.asarray(f(x + 0.5 * h * k1, u, p))
        k3 = np.asarray(f(x + 0.5 * h * k2, u, p))
        k4 = np.asarray(f(x + h * k3, u, p))
        x = x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x


def commonroad_comparison(p, manoeuvre, braking_mps2=3.0, dt=1e-3, reference=None):
    """Largest differences (position m, yaw rad, yaw rate rad/s, slip angle rad, speed m/s) and
    the largest yaw rate and slip angle of CommonRoad's model, over ``manoeuvre``: (start speed
    m/s, [(until t s, speed command m/s, curvature 1/m)], end t s) sent at 20 Hz. Same
    parameters (``p``), same inputs (the steering rate and the acceleration that wheelsim's
    actuators produce, piecewise constant per step); CommonRoad's vehicle is ``reference`` if
    given."""
    reference = p if reference is None else reference
    mu = p.tire.p_dy1
    stiffness = -p.tire.p_ky1 / p.tire.p_dy1
    vehicle = single_track(
        dt, wheel_base=p.a + p.b, base_link_offset=p.b, friction_coefficient=mu,
        dynamics__cg_to_fixed_axle=p.b, dynamics__mass=p.m, dynamics__yaw_inertia=p.I_z,
        dynamics__cornering_stiffness_steered=stiffness,
        dynamics__cornering_stiffness_fixed=stiffness, dynamics__cg_height=p.h_s,
        steering_actuator__max_position=p.steering.max, steering_actuator__max_velocity=0.4,
        drive_actuator__max_acceleration=3.0, drive_actuator__max_deceleration=braking_mps2,
    )
    start_speed, legs, end_s = manoeuvre
    vehicle.set_command(start_speed, 0.0, start_speed * legs[0][2])
    vehicle.step(round(15.0 / dt))  # up to speed on the first leg's circle: a steady start
    start = vehicle.state()
    r = row(vehicle)
    cr = np.array([start.x_m, start.y_m, r[st.S_STEER], r[st.S_SPEED_CG], start.yaw_rad,
                   start.wz_radps, r[st.S_SLIP_CG]])
    expected_speed = start_speed * math.hypot(1.0, p.b * math.tan(cr[2]) / (p.a + p.b))
    if not math.isclose(cr[3], expected_speed, rel_tol=1e-6):
        raise AssertionError(f'not at speed on the first circle: {cr[3]} m/s, not '
                             f'{expected_speed} m/s')
    worst = np.zeros(5)
    turning = np.zeros(2)  # largest yaw rate and slip angle
    steer, speed = cr[2], cr[3]
    for k in range(round(end_s / dt)):
        t = k * dt
        if k % round(0.05 / dt) == 0:  # a 20 Hz controller
            target, curvature = next((v, c) for until, v, c in legs if t < until)
            vehicle.set_command(target, 0.0, target * curvature)
        vehicle.step(1)
        r = row(vehicle)
        u = [(r[st.S_STEER] - steer) / dt, (r[st.S_SPEED_CG] - speed) / dt]
        steer, speed = r[st.S_STEER], r[st.S_SPEED_CG]
        cr = rk4(vehicle_dynamics_st, cr, u, reference, dt)
        s = vehicle.state()
        slip = math.atan2(s.vy_mps, s.vx_mps)  # base_link is the centre of mass here
        errors = np.abs([math.hypot(s.x_m - cr[0], s.y_m - cr[1]),
                         math.remainder(s.yaw_rad - cr[4], 2 * math.pi), s.wz_radps - cr[5],
                         slip - cr[6], speed - cr[3]])
        worst = np.maximum(worst, errors)
        turning = np.maximum(turning, np.abs([cr[5], cr[6]]))
    return worst, turning
