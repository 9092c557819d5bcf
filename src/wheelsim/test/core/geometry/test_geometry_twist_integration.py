"""Exact SE(2) integration of a body twist against closed-form arcs."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import quad

from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import SERIES_BELOW_RAD, arc_factors, integrate_twist


def reference_pose(pose, twist, t):
    """Pose after time t by numerical quadrature of d(x, y)/dt = R(yaw(t)) (vx, vy)."""
    x, y, yaw = pose
    vx, vy, wz = twist

    def heading(s):
        return yaw + wz * s

    def x_rate(s):
        return math.cos(heading(s)) * vx - math.sin(heading(s)) * vy

    def y_rate(s):
        return math.sin(heading(s)) * vx + math.cos(heading(s)) * vy

    dx = quad(x_rate, 0.0, t, epsabs=1e-14, epsrel=1e-13)[0]
    dy = quad(y_rate, 0.0, t, epsabs=1e-14, epsrel=1e-13)[0]
    return x + dx, y + dy, wrap_angle(yaw + wz * t)


@pytest.mark.parametrize('twist', [(1.0, 0.0, 0.5), (0.3, -0.7, -2.0), (2.0, 0.5, 1e-7),
                                   (0.0, 0.0, 3.0), (1.0, 1.0, 0.0)])
@pytest.mark.parametrize('dt', [1e-3, 0.1, 2.0])
def test_one_step_is_the_exact_arc(twist, dt):
    pose = (0.4, -1.2, 2.9)
    np.testing.assert_allclose(integrate_twist(*pose, *twist, dt), reference_pose(pose, twist, dt),
                               rtol=0, atol=1e-12)


def test_many_small_steps_equal_one_big_step():
    pose = (1.0, 2.0, -0.3)
    twist = (0.8, 0.1, 0.7)
    x, y, yaw = pose
    for _ in range(1000):
        x, y, yaw = integrate_twist(x, y, yaw, *twist, 1e-3)
    np.testing.assert_allclose((x, y, yaw), integrate_twist(*pose, *twist, 1.0), atol=1e-12)


@given(st.floats(-2 * SERIES_BELOW_RAD, 2 * SERIES_BELOW_RAD, allow_subnormal=False))
def test_series_and_closed_form_agree_near_zero(theta):
    a, b = arc_factors(theta)
    if theta != 0.0:
        assert a == pytest.approx(math.sin(theta) / theta, rel=1e-14, abs=0)
        half = theta / 2
        assert b == pytest.approx(half * (math.sin(half) / half) ** 2, rel=1e-14, abs=0)
    else:
        assert (a, b) == (1.0, 0.0)


@pytest.mark.parametrize(('angle', 'wrapped'), [
    (0.0, 0.0), (math.pi, math.pi), (-math.pi, math.pi), (3 * math.pi, math.pi),
    (2 * math.pi + 0.5, 0.5), (-2 * math.pi - 0.5, -0.5), (1e-300, 1e-300),
])
def test_wrap_angle_maps_into_minus_pi_exclusive_to_pi_inclusive(angle, wrapped):
    assert wrap_angle(angle) == pytest.approx(wrapped, abs=1e-15)
