"""KDL's rotations (core/geometry/rotations) against numpy's matrices: the same rotation, KDL's
quaternion sign, and the length KDL's norm computes."""

import math

import numpy as np
import pytest

from wheelsim.core.geometry.rotations import (
    kdl_norm,
    kdl_quaternion,
    product,
    rot2,
    rotated,
    rpy_rotation,
)


def about(axis, angle_rad):
    """Rodrigues' rotation by ``angle_rad`` about ``axis`` (normalised here)."""
    unit = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -unit[2], unit[1]], [unit[2], 0, -unit[0]], [-unit[1], unit[0], 0]])
    return np.eye(3) + math.sin(angle_rad) * k + (1 - math.cos(angle_rad)) * k @ k


def quaternion_matrix(x, y, z, w):
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


RNG = np.random.default_rng(7)
CASES = [(tuple(RNG.uniform(-4.0, 4.0, 3)), tuple(RNG.normal(size=3)), RNG.uniform(-7.0, 7.0))
         for _ in range(200)]


@pytest.mark.parametrize('rpy, axis, angle_rad', CASES[:20])
def test_rpy_and_axis_rotations_are_the_urdf_s(rpy, axis, angle_rad):
    roll, pitch, yaw = rpy
    expected = about((0, 0, 1), yaw) @ about((0, 1, 0), pitch) @ about((1, 0, 0), roll)
    assert np.reshape(rpy_rotation(*rpy), (3, 3)) == pytest.approx(expected, abs=1e-12)
    unit = tuple(np.asarray(axis) / np.linalg.norm(axis))
    assert np.reshape(rot2(unit, angle_rad), (3, 3)) == pytest.approx(about(axis, angle_rad),
                                                                      abs=1e-12)
    m = product(rpy_rotation(*rpy), rot2(unit, angle_rad))
    assert np.reshape(m, (3, 3)) == pytest.approx(expected @ about(axis, angle_rad), abs=1e-12)
    assert rotated(m, axis) == pytest.approx(np.reshape(m, (3, 3)) @ axis, abs=1e-12)


def test_the_quaternion_is_the_rotation_with_kdl_s_sign():
    for rpy, axis, angle_rad in CASES:
        m = product(rpy_rotation(*rpy), rot2(tuple(np.asarray(axis) / np.linalg.norm(axis)),
                                             angle_rad))
        x, y, z, w = kdl_quaternion(m)
        assert math.hypot(x, y, z, w) == pytest.approx(1.0, abs=1e-12)
        assert quaternion_matrix(x, y, z, w) == pytest.approx(np.reshape(m, (3, 3)), abs=1e-12)
        trace = m[0] + m[4] + m[8]
        if trace > 1e-12:  # GetQuaternion's first branch: w positive
            assert w > 0
        else:  # else the largest diagonal's component positive
            assert (x, y, z)[int(np.argmax([m[0], m[4], m[8]]))] > 0


@pytest.mark.parametrize('v', [(3.0, 4.0, 12.0), (-5.0, 0.0, 0.0), (0.0, -2.0, 1.0),
                               (1e-200, 1e-200, 0.0), (1e200, -1e200, 1e200), (0.0, 0.0, 0.0)])
def test_kdl_s_norm_is_the_length_without_overflow(v):
    assert kdl_norm(v) == pytest.approx(math.hypot(*v), rel=1e-15)
