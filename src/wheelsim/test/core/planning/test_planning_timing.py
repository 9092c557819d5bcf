"""Time scaling and trajectories: analytic profiles on lines and circles, every limit respected."""

import math

import numpy as np
import pytest

from wheelsim.core.planning.path import PathSamples, PlanningError
from wheelsim.core.planning.timing import MotionLimits, time_scale
from wheelsim.core.planning.trajectory import path_from_points, trajectory_from_poses

LIMITS = MotionLimits(
    max_speed_mps=1.0,
    max_acceleration_mps2=0.5,
    max_lateral_acceleration_mps2=0.8,
    max_yaw_rate_radps=1.2,
)


def line(length_m, spacing_m=0.01):
    s = np.linspace(0.0, length_m, int(round(length_m / spacing_m)) + 1)
    zeros = np.zeros_like(s)
    return PathSamples(s_m=s, x_m=s, y_m=zeros, yaw_rad=zeros, curvature_inv_m=zeros)


def circle(radius_m, turns=1.0, spacing_m=0.01):
    length = 2.0 * np.pi * radius_m * turns
    s = np.linspace(0.0, length, int(round(length / spacing_m)) + 1)
    angle = s / radius_m
    return PathSamples(
        s_m=s,
        x_m=radius_m * np.sin(angle),
        y_m=radius_m * (1.0 - np.cos(angle)),
        yaw_rad=angle,
        curvature_inv_m=np.full_like(s, 1.0 / radius_m),
    )


def test_long_straight_line_has_the_trapezoidal_profile():
    length, v, a = 10.0, LIMITS.max_speed_mps, LIMITS.max_acceleration_mps2
    trajectory = time_scale(line(length), LIMITS)
    # Accelerate to v, cruise, brake: T = L / v + v / a.
    assert trajectory.duration_s == pytest.approx(length / v + v / a, rel=1e-3)
    assert trajectory.v_mps.max() == pytest.approx(v)
    assert trajectory.v_mps[0] == 0.0 and trajectory.v_mps[-1] == 0.0
    np.testing.assert_allclose(trajectory.wz_radps, 0.0)
    np.testing.assert_allclose(trajectory.vy_mps, 0.0)


def test_short_straight_line_has_the_triangular_profile():
    length = 0.5  # shorter than v^2 / a = 2 m: never reaches full speed
    trajectory = time_scale(line(length), LIMITS)
    assert trajectory.duration_s == pytest.approx(2.0 * math.sqrt(length / 0.5), rel=1e-3)
    assert trajectory.v_mps.max() == pytest.approx(math.sqrt(length * 0.5), rel=1e-3)


def test_a_path_of_two_points_takes_the_triangular_time_not_forever():
    # A Nav2-style plan with a cusp at every pose makes legs of two poses: both samples at
    # rest. The fuzz test saw the controller publish a -inf/NaN tracking error from the
    # infinite time 2 ds / (0 + 0) of such a leg.
    trajectory = time_scale(path_from_points(np.array([0.0, 0.5]), np.array([0.0, 0.0])), LIMITS)
    assert trajectory.duration_s == pytest.approx(2.0 * math.sqrt(0.5 / 0.5), rel=1e-12)
    assert np.isfinite(trajectory.t_s).all()


def test_a_moving_start_keeps_its_speed_and_brakes_to_rest():
    """A plan made on the way starts at the vehicle's speed v0 = 0.5 m/s, never slower on its
    way to cruise, and saves the v0 / a s from rest to v0 less the v0^2 / (2 a v_max) s its
    v0^2 / (2 a) m take at cruise speed."""
    a = LIMITS.max_acceleration_mps2
    from_rest = time_scale(line(10.0), LIMITS)
    moving = time_scale(line(10.0), LIMITS, start_speed_mps=0.5)
    assert moving.v_mps[0] == 0.5 and moving.v_mps[-1] == 0.0
    assert np.all(np.diff(moving.v_mps[: len(moving.v_mps) // 2]) >= 0)  # no dip on the way
    saved_s = 0.5 / a - 0.5**2 / (2 * a * LIMITS.max_speed_mps)
    assert from_rest.duration_s - moving.duration_s == pytest.approx(saved_s, rel=1e-3)


def test_a_start_too_fast_to_stop_in_time_starts_at_the_fastest_that_can():
    """1 m ahead at 3 m/s cannot stop at 0.5 m/s^2 (9 m needed): the schedule starts at
    sqrt(2 a L) = 1 m/s and brakes all the way."""
    trajectory = time_scale(line(1.0), LIMITS, start_speed_mps=3.0)
    assert trajectory.v_mps[0] == pytest.approx(1.0)
    assert trajectory.duration_s == pytest.approx(2.0, rel=1e-3)


@pytest.mark.parametrize('speed', [-0.1, math.nan, math.inf])
def test_a_start_speed_that_is_not_a_speed_is_refused(speed):
    with pytest.raises(PlanningError, match='start speed must be a finite number >= 0'):
        time_scale(line(1.0), LIMITS, start_speed_mps=speed)


@pytest.mark.parametrize(
    ('radius_m', 'cruise_mps'),
    [
        (5.0, 1.0),  # speed limit
        (1.0, math.sqrt(0.8 * 1.0)),  # lateral acceleration v^2 / R = 0.8
        (0.5, 0.6),  # yaw rate v / R = 1.2 (lateral would allow 0.63)
    ],
)
def test_circle_cruises_at_the_binding_limit(radius_m, cruise_mps):
    trajectory = time_scale(circle(radius_m, turns=2.0), LIMITS)
    middle = len(trajectory) // 2
    assert trajectory.v_mps[middle] == pytest.approx(cruise_mps, rel=1e-9)
    assert trajectory.wz_radps[middle] == pytest.approx(cruise_mps / radius_m, rel=1e-9)


def assert_within_limits(trajectory, limits, tolerance=1e-9):
    v = trajectory.v_mps
    assert v.min() >= 0.0
    assert v.max() <= limits.max_speed_mps * (1 + tolerance)
    lateral = v**2 * np.abs(trajectory.curvature_inv_m)
    assert lateral.max() <= limits.max_lateral_acceleration_mps2 * (1 + tolerance)
    assert np.abs(trajectory.wz_radps).max() <= limits.max_yaw_rate_radps * (1 + tolerance)
    tangential = np.diff(v**2) / (2.0 * np.diff(trajectory.s_m))
    assert np.abs(tangential).max() <= limits.max_acceleration_mps2 * (1 + tolerance)
    assert np.all(np.diff(trajectory.t_s) > 0)


def test_every_limit_holds_on_a_path_of_varying_curvature():
    s = np.linspace(0.0, 20.0, 2001)
    curvature = 1.5 * np.sin(s / 2.0)
    yaw = np.concatenate([[0.0], np.cumsum(np.diff(s) * (curvature[1:] + curvature[:-1]) / 2)])
    path = PathSamples(
        s_m=s,
        x_m=np.concatenate([[0.0], np.cumsum(np.diff(s) * np.cos(yaw[:-1]))]),
        y_m=np.concatenate([[0.0], np.cumsum(np.diff(s) * np.sin(yaw[:-1]))]),
        yaw_rad=yaw,
        curvature_inv_m=curvature,
    )
    limits = MotionLimits(1.0, 0.5, 0.8, 1.2, max_curvature_rate_inv_ms=0.3)
    trajectory = time_scale(path, limits)
    assert_within_limits(trajectory, limits)
    curvature_rate = np.abs(np.gradient(curvature, s)) * trajectory.v_mps
    assert curvature_rate.max() <= 0.3 * (1 + 1e-9)


def test_a_bend_between_samples_keeps_the_yaw_rate_between_them():
    """Found in review: a plan's heading turned 1.75 rad between two samples 0.042 m apart
    whose curvature was far less (a hook within one segment), at 2.4 rad/s for a limit of 1."""
    s = np.array([0.0, 0.5, 1.0, 1.042, 1.5, 2.0])
    yaw = np.array([0.0, 0.0, 0.0, 1.75, 1.75, 1.75])  # the samples see no curvature at all
    path = PathSamples(s_m=s, x_m=s, y_m=np.zeros_like(s), yaw_rad=yaw,
                       curvature_inv_m=np.zeros_like(s))
    trajectory = time_scale(path, LIMITS)  # facing along the path (a reversing leg and a
    yaw_rate = np.diff(trajectory.yaw_rad) / np.diff(trajectory.t_s)  # yaw profile held it)
    assert np.abs(yaw_rate).max() == pytest.approx(LIMITS.max_yaw_rate_radps)


def test_heading_apart_from_the_path_gives_lateral_body_velocity():
    """An omni base crossing a line sideways: the body moves along its own y axis."""
    trajectory = time_scale(line(4.0), LIMITS, yaw_rad=np.full(401, np.pi / 2))
    np.testing.assert_allclose(trajectory.vx_mps, 0.0, atol=1e-12)
    np.testing.assert_allclose(trajectory.vy_mps, -trajectory.v_mps, atol=1e-12)
    np.testing.assert_allclose(trajectory.wz_radps, 0.0, atol=1e-12)


def test_turning_while_translating_respects_the_yaw_rate():
    yaw = np.linspace(0.0, 4.0 * np.pi, 401)  # two full turns along a 4 m line
    trajectory = time_scale(line(4.0), LIMITS, yaw_rad=yaw)
    assert np.abs(trajectory.wz_radps).max() == pytest.approx(LIMITS.max_yaw_rate_radps)


@pytest.mark.parametrize('field', ['max_speed_mps', 'max_yaw_rate_radps'])
def test_motion_limits_reject_non_positive_values(field):
    values = dict(
        max_speed_mps=1.0,
        max_acceleration_mps2=1.0,
        max_lateral_acceleration_mps2=1.0,
        max_yaw_rate_radps=1.0,
    )
    values[field] = 0.0
    with pytest.raises(PlanningError, match=field):
        MotionLimits(**values)


def test_trajectory_interpolates_and_holds_its_end():
    trajectory = time_scale(line(10.0), LIMITS)
    point = trajectory.at_time(1.0)  # accelerating: s = a t^2 / 2
    assert point.s_m == pytest.approx(0.25, abs=1e-3)
    assert point.v_mps == pytest.approx(0.5, abs=1e-3)
    end = trajectory.at_time(trajectory.duration_s + 5.0)
    assert end.x_m == pytest.approx(10.0) and end.v_mps == 0.0
    assert trajectory.at_time(-1.0).x_m == 0.0
    assert trajectory.at_arc_length(4.0).x_m == pytest.approx(4.0)


def test_one_field_of_the_reference_is_the_same_to_the_last_bit():
    trajectory = time_scale(line(10.0), LIMITS)
    times = [-1.0, 0.0, 0.3, 1.0, *trajectory.t_s[5:8].tolist(), trajectory.duration_s, 1e9,
             math.nan]
    lengths = [-1.0, 0.0, 0.01, 4.0, *trajectory.s_m[5:8].tolist(), trajectory.length_m, 1e9,
               math.nan]
    for field in ('t_s', 's_m', 'x_m', 'yaw_rad', 'vx_mps', 'curvature_inv_m'):
        for t_s, s_m in zip(times, lengths, strict=True):
            at_time = getattr(trajectory.at_time(t_s), field)
            at_length = getattr(trajectory.at_arc_length(s_m), field)
            assert np.array_equal(trajectory.value_at_time(t_s, field), at_time, equal_nan=True)
            assert np.array_equal(trajectory.value_at_arc_length(s_m, field), at_length,
                                  equal_nan=True)
            # Bit for bit: np.interp's arithmetic (signs of zeros included).
            assert math.copysign(1.0, trajectory.value_at_time(t_s, field)) == \
                math.copysign(1.0, at_time)


def test_timed_poses_rebuild_the_velocities():
    planned = time_scale(circle(2.0, spacing_m=0.05), LIMITS)
    rebuilt = trajectory_from_poses(planned.t_s + 100.0, planned.x_m, planned.y_m, planned.yaw_rad)
    np.testing.assert_allclose(rebuilt.t_s, planned.t_s)
    np.testing.assert_allclose(rebuilt.s_m, planned.s_m, rtol=1e-3)
    inner = slice(5, -5)
    np.testing.assert_allclose(rebuilt.v_mps[inner], planned.v_mps[inner], atol=0.02)
    np.testing.assert_allclose(rebuilt.wz_radps[inner], planned.wz_radps[inner], atol=0.02)
    np.testing.assert_allclose(rebuilt.curvature_inv_m[inner], 0.5, atol=0.01)
    np.testing.assert_allclose(rebuilt.vy_mps, 0.0, atol=0.01)


@pytest.mark.parametrize(
    ('times', 'message'),
    [
        ([0.0, 0.0, 0.0], 'strictly increasing'),
        ([0.0], 'at least 2'),
        ([0.0, np.nan], 'non-finite'),
    ],
)
def test_timed_poses_without_a_usable_schedule_are_rejected(times, message):
    count = len(times)
    with pytest.raises(PlanningError, match=message):
        trajectory_from_poses(times, np.arange(count), np.zeros(count), np.zeros(count))


@pytest.mark.parametrize('chord_m', [None, 0.05, 0.5, 2.0])
def test_path_from_points_measures_tangent_and_curvature(chord_m):
    angle = np.linspace(0.0, np.pi, 200)
    path = path_from_points(3.0 * np.cos(angle), 3.0 * np.sin(angle), chord_m)
    end_m = (chord_m or 0.0) / 2 + 0.05  # a chord's direction is constant over its half
    inside = (path.s_m > end_m) & (path.s_m < path.length_m - end_m)
    np.testing.assert_allclose(path.curvature_inv_m[inside], 1.0 / 3.0, rtol=1e-3)
    np.testing.assert_allclose(path.yaw_rad[inside], angle[inside] + np.pi / 2, atol=1e-4)
    assert path.length_m == pytest.approx(3.0 * np.pi, rel=1e-4)


def test_path_from_points_spreads_a_kink_over_the_chord():
    """A grid path's start (the real NavFn's): 5 cm west, then on 30 degrees further round.
    Taken pose by pose, its curvature was 12/m; over a 0.5 m chord it is 30 degrees in 0.5 m,
    and the path is still driven through every point."""
    turn_rad = math.radians(30.0)
    x = np.r_[0.0, -0.05 - 0.025 * np.cos(turn_rad) * np.arange(40)]
    y = np.r_[0.0, 0.0 - 0.025 * np.sin(turn_rad) * np.arange(40)]
    path = path_from_points(x, y, 0.5)
    np.testing.assert_array_equal(path.x_m, x)
    assert np.abs(path.curvature_inv_m).max() <= turn_rad / 0.5 * 1.05
    assert np.abs(path_from_points(x, y, 0.05).curvature_inv_m).max() > 5.0
