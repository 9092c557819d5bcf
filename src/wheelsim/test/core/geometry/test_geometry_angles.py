"""One angle-wrapping rule for floats, arrays and compiled code: (-pi, pi], exact inside."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wheelsim.core.compiled import compiled
from wheelsim.core.geometry.angles import (
    quaternion_yaw,
    wrap_angle,
    wrap_angles,
    yaw_quaternion_zw,
)


@compiled
def wrap_in_compiled_code(angle_rad):
    return wrap_angle(angle_rad)


@pytest.mark.parametrize(
    ('angle', 'wrapped'),
    [
        (0.0, 0.0),
        (math.pi, math.pi),
        (-math.pi, math.pi),
        (3 * math.pi / 2, -math.pi / 2),
        (-3 * math.pi / 2, math.pi / 2),
        (7.0, 7.0 - 2 * math.pi),
        (-7.0, -7.0 + 2 * math.pi),
        (20 * math.pi + 0.5, 0.5),
    ],
)
def test_wrap_angle_analytic(angle, wrapped):
    assert wrap_angle(angle) == pytest.approx(wrapped, abs=1e-12)
    assert wrap_in_compiled_code(angle) == wrap_angle(angle)
    assert wrap_angles([angle])[0] == wrap_angle(angle)


@given(st.floats(min_value=-1e6, max_value=1e6))
def test_float_array_and_compiled_agree_bit_for_bit(angle):
    wrapped = wrap_angle(angle)
    assert -math.pi < wrapped <= math.pi
    assert wrap_in_compiled_code(angle) == wrapped
    assert wrap_angles(np.array([angle, angle]))[1] == wrapped
    assert math.cos(wrapped) == pytest.approx(math.cos(angle), abs=1e-9)


@given(st.floats(min_value=-math.pi, max_value=math.pi, exclude_min=True))
def test_angles_inside_are_returned_unchanged(angle):
    assert wrap_angle(angle) == angle
    assert wrap_in_compiled_code(angle) == angle
    assert wrap_angles([angle])[0] == angle


@given(st.floats(-math.pi, math.pi, exclude_min=True), st.floats(1e-3, 1e3))
def test_quaternion_yaw_inverts_yaw_quaternion_at_any_scale(yaw, scale):
    z, w = yaw_quaternion_zw(yaw)
    assert quaternion_yaw(0.0, 0.0, scale * z, scale * w) == pytest.approx(yaw, abs=1e-12)


def test_quaternion_yaw_ignores_roll_and_refuses_no_rotation():
    # yaw 0.5 about z, then a 90 degree roll about the turned x axis: the heading stays 0.5
    half_roll, half_yaw = math.pi / 4, 0.25
    x, y = math.cos(half_yaw) * math.sin(half_roll), math.sin(half_yaw) * math.sin(half_roll)
    z, w = math.sin(half_yaw) * math.cos(half_roll), math.cos(half_yaw) * math.cos(half_roll)
    assert quaternion_yaw(x, y, z, w) == pytest.approx(0.5, abs=1e-12)
    assert math.isnan(quaternion_yaw(0.0, 0.0, 0.0, 0.0))
    assert math.isnan(quaternion_yaw(math.inf, 0.0, 0.0, 1.0))


def test_property_tests_run_without_a_per_example_deadline():
    """conftest loads wheelsim's hypothesis profile: a first example that loads a compiled
    kernel took 367 ms on a busy CI machine, over hypothesis's default 200 ms deadline."""
    from hypothesis import settings

    assert settings.default.deadline is None
