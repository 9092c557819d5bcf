"""Tracking laws, errors and output limits, one step at a time, against analytic answers."""

import math
import struct

import numpy as np
import pytest

from wheelsim.core.compiled import plain_function
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.params import ParameterError, from_flat
from wheelsim.core.planning.config import PlannerConfig
from wheelsim.core.planning.path import PlanningError
from wheelsim.core.planning.planner import plan_through, plan_to_goal
from wheelsim.core.planning.timing import MotionLimits, time_scale
from wheelsim.core.planning.trajectory import TrajectoryPoint, path_from_points
from wheelsim.core.planning.waypoints import waypoints_from_lists
from wheelsim.core.tracking.config import (
    ControllerConfig,
    FeedforwardConfig,
    OutputLimitsConfig,
    PurePursuitConfig,
    StanleyConfig,
)
from wheelsim.core.tracking.controller import (
    GOAL_FAILED,
    GOAL_REACHED,
    IDLE,
    TRACKING,
    TrackingController,
    trajectory_from_plan,
)
from wheelsim.core.tracking.feedforward import feedforward_twist
from wheelsim.core.tracking.limits import _limited, limit_twist
from wheelsim.core.tracking.point import point_to_point_twist
from wheelsim.core.tracking.pure_pursuit import pure_pursuit_twist
from wheelsim.core.tracking.reference import ZERO_TWIST, BodyTwist, PathProgress, tracking_errors
from wheelsim.core.tracking.stanley import stanley_twist, steered_point, steered_point_trajectory
from wheelsim.testing.configs import FIXED_CONTROLLER, FIXED_PLANNER

LIMITS = MotionLimits(1.0, 0.5, 1.0, 1.0)


def straight(length_m=20.0):
    x = np.linspace(0.0, length_m, int(length_m / 0.05) + 1)
    return time_scale(path_from_points(x, np.zeros_like(x)), LIMITS)


def reference(x=0.0, y=0.0, yaw=0.0, v=1.0, w=0.0, vy=0.0):
    return TrajectoryPoint(0.0, 0.0, x, y, yaw, yaw, 0.0, v, v, vy, w)


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(('y', 'expected'), [(0.3, 0.3), (-0.2, -0.2)])
def test_cross_track_is_positive_left_of_the_path(y, expected):
    trajectory = straight()
    progress = PathProgress(trajectory)
    nearest = progress.nearest(5.0, y)
    errors = tracking_errors(nearest, Pose2D(5.0, y, 0.1), scheduled_s_m=4.0)
    assert errors.cross_track_m == pytest.approx(expected)
    assert errors.along_track_m == pytest.approx(1.0)  # 1 m ahead of schedule
    assert errors.heading_rad == pytest.approx(0.1)


def test_projection_extends_beyond_the_path_end():
    trajectory = straight(10.0)
    nearest = PathProgress(trajectory).nearest(10.5, 0.1)
    assert nearest.s_m == pytest.approx(10.5)
    assert nearest.offset_m == pytest.approx(0.1)


def test_progress_stays_on_the_branch_being_driven_where_the_path_crosses_itself():
    """A figure-eight crosses itself at the origin: the second pass must not jump back."""
    angle = np.linspace(np.pi / 2, np.pi / 2 + 2 * np.pi, 2001)
    x = 10 * np.cos(angle) / (1 + np.sin(angle) ** 2)
    y = 10 * np.sin(angle) * np.cos(angle) / (1 + np.sin(angle) ** 2)
    trajectory = time_scale(path_from_points(x, y), LIMITS)
    progress = PathProgress(trajectory)
    assert progress.nearest(0.0, 0.0, near_s_m=0.0).s_m == pytest.approx(0.0, abs=1e-6)
    half = trajectory.length_m / 2
    for s in [*np.arange(0.5, half, 0.5), half]:  # drive to the crossing along the path
        point = trajectory.at_arc_length(s)
        found = progress.nearest(point.x_m, point.y_m)
    assert found.s_m == pytest.approx(half, abs=0.01)


# --- feedforward ---------------------------------------------------------------------------


def test_feedforward_on_the_reference_commands_the_feedforward():
    command = feedforward_twist(
        reference(1, 2, 0.5, v=0.8, w=0.3), Pose2D(1, 2, 0.5), FeedforwardConfig(), False
    )
    assert command == pytest.approx((0.8, 0.0, 0.3))


def test_feedforward_pulls_towards_the_reference():
    gains = FeedforwardConfig(k_x=1.0, k_y=2.0, k_theta=3.0)
    # Reference 0.5 m ahead and 0.2 m to the left, 0.1 rad more to the left.
    command = feedforward_twist(reference(0.5, 0.2, 0.1, v=1.0), Pose2D(0, 0, 0), gains, False)
    assert command.vx_mps == pytest.approx(math.cos(0.1) + 0.5)
    assert command.wz_radps == pytest.approx(2.0 * 0.2 + 3.0 * math.sin(0.1))
    assert command.vy_mps == 0.0


def test_feedforward_for_omni_corrects_sideways():
    command = feedforward_twist(
        reference(0.0, 0.2, 0.0, v=0.0), Pose2D(0, 0, 0), FeedforwardConfig(), True
    )
    assert command == pytest.approx((0.0, 0.2, 0.0))


def test_plans_without_times_stop_at_each_cusp_and_back_up_facing_their_poses():
    """Nav2-style (equal stamps): 4 m forwards, then 2 m back along the line facing +x."""
    config = from_flat(ControllerConfig, {**FIXED_CONTROLLER, 'limits.max_linear_x': 0.5})
    x = np.concatenate([np.linspace(0.0, 4.0, 81), np.linspace(3.95, 2.0, 40)])
    trajectory, timed = trajectory_from_plan(np.zeros(121), x, np.zeros(121), np.zeros(121),
                                             config)
    assert not timed
    assert [(leg.first, leg.last, leg.reverse) for leg in trajectory.legs] == [
        (0, 80, False), (80, 120, True)]
    assert trajectory.v_mps[80] == 0.0  # at rest at the cusp
    assert trajectory.vx_mps[:80].min() >= 0.0 and trajectory.vx_mps[81:].max() <= 0.0
    np.testing.assert_allclose(trajectory.yaw_rad, 0.0, atol=1e-12)  # facing +x throughout
    assert trajectory.length_m == pytest.approx(6.0)


# --- pure pursuit ----------------------------------------------------------------------------


def test_pure_pursuit_backs_along_a_reversed_leg_towards_a_point_behind():
    """The path runs from x = 10 back to 0 with the car facing +x."""
    trajectory = plan_to_goal(from_flat(PlannerConfig, {**FIXED_PLANNER, 'model': 'bicycle',
                                                        'limits.max_curvature': 0.25}),
                              Pose2D(10.0, 0.0, 0.0), Pose2D(0.0, 0.0, 0.0))
    assert [leg.reverse for leg in trajectory.legs] == [True]
    config = PurePursuitConfig(min_lookahead=1.0, max_lookahead=1.0, regulated_min_radius=0.0)
    pose = Pose2D(5.0, -0.5, 0.0)  # right of the path, the lookahead point 1 m behind
    nearest = PathProgress(trajectory).nearest(pose.x_m, pose.y_m)
    command = pure_pursuit_twist(trajectory, nearest, pose, -1.0, config, 'bicycle',
                                 reverse=True)
    assert command.vx_mps == pytest.approx(-1.0)
    # The circle through the point (-1, 0.5) in the body frame, driven backwards.
    assert command.wz_radps / command.vx_mps == pytest.approx(2 * 0.5 / (1.0 + 0.25))


def test_stanley_in_reverse_steers_the_point_behind_back_to_its_path():
    """Backing towards -x while facing +x, 0.3 m left (+y) of the path: the point 2 m behind
    is led back onto its own path, at the plan's negative speed."""
    trajectory = plan_to_goal(from_flat(PlannerConfig, {**FIXED_PLANNER, 'model': 'bicycle',
                                                        'limits.max_curvature': 0.25}),
                              Pose2D(10.0, 0.0, 0.0), Pose2D(0.0, 0.0, 0.0))
    leg = trajectory.legs[0]
    guide = steered_point_trajectory(trajectory, 2.0, leg)
    np.testing.assert_allclose(guide.x_m, trajectory.x_m - 2.0)  # 2 m behind base_link
    pose = Pose2D(5.0, 0.3, 0.0)
    behind = PathProgress(guide).nearest(*steered_point(pose, 2.0, reverse=True))
    command = stanley_twist(behind, pose, -1.0, 0.0, 1.0, StanleyConfig(), 2.0, 0.5,
                            reverse=True)
    assert command.vx_mps == pytest.approx(-1.0)
    # The point behind is 0.3 m right of its path seen along the travel (-x): steered back by
    # atan2(k e, softening + |v|); turning left (wz > 0) swings the rear to -y.
    steer = math.atan2(1.5 * 0.3, 0.5 + 1.0)
    assert command.wz_radps == pytest.approx(-1.0 * math.tan(-steer) / 2.0)


def test_pure_pursuit_curvature_is_two_y_over_d_squared():
    trajectory = straight()
    config = PurePursuitConfig(min_lookahead=1.0, max_lookahead=1.0, regulated_min_radius=0.0)
    pose = Pose2D(5.0, -0.5, 0.0)
    nearest = PathProgress(trajectory).nearest(pose.x_m, pose.y_m)
    command = pure_pursuit_twist(trajectory, nearest, pose, 1.0, config, 'bicycle')
    assert command.wz_radps / command.vx_mps == pytest.approx(2 * 0.5 / (1.0 + 0.25))
    assert command.vx_mps == pytest.approx(1.0)  # the plan's cruise speed


def test_pure_pursuit_slows_on_tight_curves_and_near_the_goal():
    trajectory = straight(10.0)
    config = PurePursuitConfig(min_lookahead=1.0, max_lookahead=1.0, regulated_min_radius=4.0)
    pose = Pose2D(5.0, -0.5, 0.0)  # needs radius 1.25 m: speed * 1.25 / 4
    nearest = PathProgress(trajectory).nearest(pose.x_m, pose.y_m)
    command = pure_pursuit_twist(trajectory, nearest, pose, 1.0, config, 'bicycle')
    assert command.vx_mps == pytest.approx(1.25 / 4.0)
    near_goal = Pose2D(9.5, 0.0, 0.0)
    config = PurePursuitConfig(approach_distance=1.0)
    nearest = PathProgress(trajectory).nearest(near_goal.x_m, near_goal.y_m)
    command = pure_pursuit_twist(trajectory, nearest, near_goal, 0.5, config, 'bicycle')
    # The plan brakes at 0.5 m/s^2: sqrt(2 * 0.5 * 0.5) here, halved 0.5 m before the goal.
    assert command.vx_mps == pytest.approx(math.sqrt(0.5) * 0.5, rel=1e-3)
    at_goal = Pose2D(9.999, 0.0, 0.0)
    nearest = PathProgress(trajectory).nearest(at_goal.x_m, at_goal.y_m)
    command = pure_pursuit_twist(trajectory, nearest, at_goal, 0.0, config, 'bicycle')
    assert command.vx_mps == pytest.approx(config.min_approach_speed)


def test_pure_pursuit_turns_a_differential_on_the_spot_when_facing_away():
    trajectory = straight()
    pose = Pose2D(2.0, 0.0, 2.0)
    nearest = PathProgress(trajectory).nearest(pose.x_m, pose.y_m)
    config = PurePursuitConfig()
    command = pure_pursuit_twist(trajectory, nearest, pose, 0.0, config, 'differential')
    assert command == pytest.approx((0.0, 0.0, -2.0 * config.k_theta))


def test_pure_pursuit_drives_an_omni_base_sideways_to_the_path():
    trajectory = straight()
    pose = Pose2D(5.0, -1.0, math.pi / 2)  # facing +y, path on the base's right... ahead
    nearest = PathProgress(trajectory).nearest(pose.x_m, pose.y_m)
    command = pure_pursuit_twist(trajectory, nearest, pose, 0.0, PurePursuitConfig(), 'omni')
    assert command.vx_mps > 0 and command.vy_mps < 0  # forward (to +y) and right (to +x)


# --- Stanley ---------------------------------------------------------------------------------


def test_stanley_front_axle_path_of_a_circle_has_the_steady_steering():
    radius, base = 5.0, 2.0
    points = [
        [radius * math.sin(a), radius * (1 - math.cos(a)), a] for a in np.linspace(0, 2 * np.pi, 33)
    ]
    trajectory = plan_through(waypoints_from_lists(points), from_flat(PlannerConfig, FIXED_PLANNER))
    front = steered_point_trajectory(trajectory, base, trajectory.legs[0])
    inner = slice(len(front) // 4, 3 * len(front) // 4)
    offset = front.path_yaw_rad[inner] - trajectory.yaw_rad[inner]
    np.testing.assert_allclose(offset, math.atan(base / radius), atol=0.02)


@pytest.mark.parametrize(('y', 'sign'), [(0.3, -1.0), (-0.3, 1.0)])
def test_stanley_steers_the_front_axle_back_to_its_path(y, sign):
    trajectory = straight()
    front_path = steered_point_trajectory(trajectory, 2.0, trajectory.legs[0])
    pose = Pose2D(5.0, y, 0.0)
    front = PathProgress(front_path).nearest(*steered_point(pose, 2.0))
    command = stanley_twist(front, pose, 1.0, 0.0, 1.0, StanleyConfig(), 2.0, 0.5)
    assert command.vx_mps == pytest.approx(1.0)
    expected = math.atan2(1.5 * 0.3, 0.5 + 1.0)
    assert command.wz_radps == pytest.approx(sign * math.tan(expected) / 2.0)


def test_stanley_steering_is_clamped_and_speed_follows_the_schedule():
    trajectory = straight()
    front_path = steered_point_trajectory(trajectory, 2.0, trajectory.legs[0])
    pose = Pose2D(5.0, 3.0, 0.0)
    front = PathProgress(front_path).nearest(*steered_point(pose, 2.0))
    command = stanley_twist(front, pose, 1.0, 0.5, 1.0, StanleyConfig(k_s=1.0), 2.0, 0.3)
    assert command.vx_mps == pytest.approx(0.5)  # 0.5 m ahead of schedule
    assert command.wz_radps == pytest.approx(-0.5 * math.tan(0.3) / 2.0)


# --- output limits ---------------------------------------------------------------------------


def test_limits_clamp_rate_limit_and_keep_the_steering_limit():
    limits = OutputLimitsConfig(
        max_linear_x=1.0,
        min_linear_x=-0.2,
        max_linear_y=0.5,
        max_angular_z=1.0,
        max_linear_acceleration=2.0,
        max_angular_acceleration=4.0,
    )
    out = limit_twist(BodyTwist(5.0, 3.0, -9.0), ZERO_TWIST, 0.1, limits, holonomic=True)
    assert out == pytest.approx((0.2, 0.2, -0.4))  # 2 m/s^2 and 4 rad/s^2 for 0.1 s
    out = limit_twist(
        BodyTwist(-5.0, 3.0, 0.9), BodyTwist(0.0, 0.0, 0.9), 1.0, limits, holonomic=False
    )
    assert out == pytest.approx((-0.2, 0.0, 0.9))
    out = limit_twist(BodyTwist(0.5, 0.0, 1.0), BodyTwist(0.5, 0, 1.0), 0.1, limits, False, 0.5)
    assert out == pytest.approx((0.5, 0.0, 0.25))  # |wz| <= 0.5 1/m * 0.5 m/s


def test_a_range_lowered_live_applies_at_once_over_the_acceleration_limit():
    """Found in review: max_linear_x lowered from 2 to 0.5 m/s while driving at 2 m/s gave
    1.975, 1.95, ... m/s (0.5 m/s^2 from the previous command), about 3 s above the limit."""
    limits = OutputLimitsConfig(max_linear_x=0.5, min_linear_x=-0.5, max_linear_y=0.5,
                                max_angular_z=1.0, max_linear_acceleration=0.5,
                                max_angular_acceleration=0.5)
    out = limit_twist(BodyTwist(2.0, 2.0, 2.0), BodyTwist(2.0, 2.0, 2.0), 0.05, limits,
                      holonomic=True)
    assert out == pytest.approx((0.5, 0.5, 1.0))


def test_limits_turn_a_non_finite_command_into_zero():
    out = limit_twist(
        BodyTwist(math.nan, 0.0, math.inf), ZERO_TWIST, 0.05,
        from_flat(ControllerConfig, FIXED_CONTROLLER).limits, True
    )
    assert out == ZERO_TWIST


@pytest.mark.parametrize('seed', range(5))
def test_limits_compiled_and_in_plain_python_agree_bit_for_bit(seed):
    """numba's min and max keep Python's choice between equal values (signed zeros)."""
    rng = np.random.default_rng(seed)
    specials = [0.0, -0.0, math.nan, math.inf, -math.inf, 1e300, 0.3, -0.3]
    for _ in range(300):
        components = [float(rng.choice(specials)) if rng.random() < 0.3
                      else float(rng.normal(0.0, 1.0)) for _ in range(6)]
        limits = [float(rng.choice([0.0, -0.0, 0.3, 1.0])) for _ in range(6)]
        limits[0] = -abs(limits[0])  # min_linear_x
        args = (*components, float(rng.choice([0.05, 0.1])), *limits, bool(rng.random() < 0.5),
                float(rng.choice([0.0, 0.5])))
        compiled, plain = _limited(*args), plain_function(_limited)(*args)
        assert struct.pack('<3d', *compiled) == struct.pack('<3d', *plain), args


# --- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('values', 'message'),
    [
        ({'algorithm': 'mpc'}, "parameter algorithm = 'mpc' is invalid: must be one of"),
        ({'control_rate': 0.0}, 'parameter control_rate'),
        ({'pure_pursuit.min_lookahead': 5.0}, 'parameter pure_pursuit.min_lookahead = 5.0'),
        ({'limits.min_linear_x': 0.5},
         r"parameter limits.min_linear_x = 0.5 .* must be 1 \(minus the vehicle's top speed\) "
         r'or a finite number in \[-100, 0\]'),
        ({'wheel_base': -0.5},
         r'parameter wheel_base = -0.5 .* -1 \(from the vehicle\) or a finite number in '
         r'\(0, 100\]'),
        ({'untimed_plans.max_acceleration': -0.5},
         r'parameter untimed_plans.max_acceleration = -0.5 .* -1 \(from the vehicle\) or a '
         r'finite number in \(0, 100\]'),
        ({'untimed_plans.max_lateral_acceleration': 0.0},
         r'parameter untimed_plans.max_lateral_acceleration = 0.0 .* -1 \(from the vehicle\)'),
    ],
)
def test_invalid_controller_configuration_names_the_parameter(values, message):
    with pytest.raises(ParameterError, match=message):
        from_flat(ControllerConfig, values)


# --- controller: goal and plans ---------------------------------------------------------------


def controller(**values):
    return TrackingController(from_flat(ControllerConfig, {**FIXED_CONTROLLER, **values}))


def run_until(ctl, end_s, pose, start_s=0.0):
    """Step at 20 Hz from ``start_s`` to ``end_s`` with ``pose``; the last step (or the first
    that is not tracking)."""
    for t in np.arange(start_s, end_s + 1e-9, 0.05):
        step = ctl.step(float(t), pose)
        if step.status != TRACKING:
            break
    return step


def test_controller_without_a_plan_is_idle():
    step = controller().step(0.0, Pose2D(0, 0, 0))
    assert (step.command, step.errors, step.status) == (None, None, IDLE)


def test_controller_stops_once_at_the_goal_then_idles():
    ctl = controller()
    trajectory = straight(5.0)
    ctl.follow(trajectory, 0.0)
    there = Pose2D(4.95, 0.02, 0.05)
    early = run_until(ctl, trajectory.duration_s - 0.1, there)
    assert early.status == TRACKING  # there, but the schedule has not ended yet
    done = run_until(ctl, trajectory.duration_s + 0.1, there, trajectory.duration_s - 0.05)
    assert (done.command, done.status) == (ZERO_TWIST, GOAL_REACHED)
    assert 'goal reached' in done.message
    assert ctl.step(trajectory.duration_s + 0.05, Pose2D(4.95, 0.02, 0.05)).status == IDLE


def test_controller_turns_on_the_spot_to_the_final_heading():
    ctl = controller()
    trajectory = straight(5.0)
    ctl.follow(trajectory, 0.0)
    step = run_until(ctl, trajectory.duration_s, Pose2D(5.0, 0.0, 0.5))
    assert step.status == TRACKING
    assert step.command.vx_mps == 0.0 and step.command.wz_radps < 0.0


@pytest.mark.parametrize('algorithm, stays', [
    ('feedforward', True), ('stanley', True), ('pure_pursuit', False)])
def test_a_differential_robot_once_at_its_final_position_turns_only_there(algorithm, stays):
    """Found in review: a pose estimate noisier than ``goal.xy_tolerance`` turned a
    differential robot at its goal towards each new noisy position until the goal timed out.
    Finishing point to point (feedforward, Stanley), once there at rest it stays and turns onto
    the heading (Nav2's stateful goal checker); pure pursuit keeps closing in (it stops at the
    tolerance's edge: held there, it ended beyond it)."""
    ctl = controller(algorithm=algorithm)
    trajectory = straight(5.0)
    ctl.follow(trajectory, 0.0)
    end_s = trajectory.duration_s
    for t_s in np.arange(0.0, end_s + 0.05, 0.05):  # on the schedule, at the end off its heading
        x_m = min(trajectory.value_at_time(t_s, 'x_m'), 4.99)
        there = ctl.step(float(t_s), Pose2D(x_m, 0.0, -0.5 if x_m > 4.5 else 0.0))
    assert there.status == TRACKING and there.command == BodyTwist(0.0, 0.0, there.command.wz_radps)
    assert there.command.wz_radps > 0.0  # turning on the spot onto the heading
    for t_s in np.arange(end_s + 0.1, end_s + 1.0, 0.05):  # the estimate has jumped aside
        aside = ctl.step(float(t_s), Pose2D(5.0, 0.3, -0.5))
    assert (aside.command == BodyTwist(0.0, 0.0, aside.command.wz_radps)
            and aside.command.wz_radps > 0.0) == stays  # onto the heading, or to the point


def test_controller_gives_up_after_the_timeout():
    ctl = controller(**{'goal.timeout': 1.0})
    trajectory = straight(5.0)
    ctl.follow(trajectory, 0.0)
    step = run_until(ctl, trajectory.duration_s + 1.5, Pose2D(4.5, 0.0, 0.0))  # 0.5 m short
    assert (step.command, step.status) == (ZERO_TWIST, GOAL_FAILED)
    assert '0.500 m' in step.message
    stalled = controller(**{'goal.timeout': 1.0})
    stalled.follow(straight(20.0), 0.0)
    for t in np.arange(0.0, 10.0, 0.05):  # stuck at the start
        step = stalled.step(float(t), Pose2D(0.0, 0.0, 0.0))
        if step.status != TRACKING:
            break
    assert t == pytest.approx(3.0, abs=0.1)  # 1 s after the plan got 1 m ahead (at 2 s)
    assert step.status == GOAL_FAILED and 'the schedule waited' in step.message


def test_schedule_waits_for_a_vehicle_that_lags_behind():
    ctl = controller(max_schedule_lag=1.0)
    trajectory = straight(20.0)
    ctl.follow(trajectory, 0.0)
    stalled = run_until(ctl, 10.0, Pose2D(2.0, 0.0, 0.0))  # 10 s in, the plan would be at 9 m
    assert stalled.errors.along_track_m == pytest.approx(-1.0)
    moving = ctl.step(10.05, Pose2D(2.05, 0.0, 0.0))
    assert moving.errors.along_track_m == pytest.approx(-1.0, abs=0.05)
    unlimited = controller(max_schedule_lag=0.0)
    unlimited.follow(trajectory, 0.0)
    assert run_until(unlimited, 10.0, Pose2D(2.0, 0.0, 0.0)).errors.along_track_m < -6.0


def test_schedule_holds_while_there_is_no_pose():
    ctl = controller(**{'goal.timeout': 1.0})
    ctl.follow(straight(20.0), 0.0)
    ctl.step(0.0, Pose2D(0.0, 0.0, 0.0))
    for t in np.arange(0.05, 5.0, 0.05):  # 5 s without a pose: no waiting, no timeout
        ctl.hold(t)
    step = ctl.step(5.0, Pose2D(0.0, 0.0, 0.0))
    assert step.status == TRACKING
    assert step.errors.along_track_m == pytest.approx(0.0, abs=0.02)  # a period or two in


@pytest.mark.parametrize('jump_s', [30.0, -30.0])
def test_schedule_does_not_jump_with_the_clock(jump_s):
    ctl = controller(**{'goal.timeout': 1.0})
    ctl.follow(straight(20.0), 100.0)
    ctl.step(100.0, Pose2D(0.0, 0.0, 0.0))
    step = ctl.step(100.0 + jump_s, Pose2D(0.0, 0.0, 0.0))
    assert step.status == TRACKING
    assert step.errors.along_track_m == pytest.approx(0.0, abs=0.02)  # a period or two in


@pytest.mark.parametrize('stamped_s', [98.5, 100.0, 101.5])
def test_a_plan_stamped_a_little_early_or_late_starts_at_the_first_step(stamped_s):
    """docs/planning_control.md (found in review: it said the stamps were kept, so a plan
    stamped 1.5 s late would wait and one 1.5 s early start 0.75 m behind)."""
    ctl = controller()
    ctl.follow(straight(20.0), stamped_s)
    ctl.step(100.0, Pose2D(0.0, 0.0, 0.0))
    step = ctl.step(100.05, Pose2D(0.0, 0.0, 0.0))
    reference = ctl.step(100.1, Pose2D(0.0, 0.0, 0.0))
    assert step.status == reference.status == TRACKING
    assert reference.errors.along_track_m == pytest.approx(0.0, abs=0.02)  # a period or two in


@pytest.mark.parametrize(
    ('pose', 'expected'),
    [
        (Pose2D(0.0, 0.0, 0.0), (1.0, 0.0, 0.0)),  # goal 1 m ahead: drive
        (Pose2D(0.0, 0.0, math.pi / 2), (0.0, 0.0, -math.pi / 2)),  # goal on the right: turn
        (Pose2D(2.0, 0.2, 0.0), (-1.0, 0.0, math.atan2(0.2, 1.0))),  # goal behind: reverse
    ],
)
def test_point_to_point_turns_towards_the_goal_then_drives(pose, expected):
    assert point_to_point_twist(1.0, 0.0, pose, k_x=1.0, k_theta=1.0) == pytest.approx(expected)


def test_differential_ends_point_to_point_beside_the_goal():
    """The schedule has ended 0.3 m beside the goal: the feedforward law alone would stay."""
    ctl = controller()
    trajectory = straight(5.0)
    ctl.follow(trajectory, 0.0)
    step = run_until(ctl, trajectory.duration_s + 1.0, Pose2D(5.0, -0.3, 0.0))
    assert step.status == TRACKING
    assert step.command.vx_mps == 0.0 and step.command.wz_radps > 0.0  # turns to face it


@pytest.mark.parametrize('pose', [Pose2D(math.nan, 0.0, 0.0), Pose2D(0.0, 0.0, math.inf),
                                  Pose2D(-1e308, 0.0, 0.0), Pose2D(0.0, 1e9 + 1.0, 0.0)])
def test_controller_refuses_a_non_finite_or_far_pose(pose):
    """A pose of -1e308 m once gave -inf/NaN tracking errors, and +1e308 m zero errors."""
    ctl = controller()
    ctl.follow(straight(5.0), 0.0)
    with pytest.raises(ValueError, match=r'finite, with x and y within \+-1e\+09 m'):
        ctl.step(0.0, pose)
    step = ctl.step(0.0, Pose2D(1e9, 0.0, 0.0))  # at the bound: taken, and the errors finite
    assert step.errors is not None and all(map(math.isfinite, step.errors))


def test_plans_without_times_are_timed_within_the_output_limits():
    config = from_flat(ControllerConfig, {**FIXED_CONTROLLER, 'limits.max_linear_x': 0.5})
    x = np.linspace(0.0, 4.0, 81)
    trajectory, timed = trajectory_from_plan(np.zeros(81), x, np.zeros(81), np.zeros(81), config)
    assert not timed
    assert trajectory.v_mps.max() == pytest.approx(0.5)
    planned, timed = trajectory_from_plan(np.arange(81.0), x, np.zeros(81), np.zeros(81), config)
    assert timed and planned.duration_s == 80.0
    with pytest.raises(PlanningError):
        trajectory_from_plan([], [], [], [], config)


def test_a_reversing_leg_of_a_plan_without_times_is_timed_within_the_backward_limit():
    """Found in review: it was timed at limits.max_linear_x, so a car allowed -0.5 m/s fell
    behind a schedule backing up at 2 m/s, and the goal timed out."""
    config = from_flat(ControllerConfig, {**FIXED_CONTROLLER, 'model': 'bicycle',
                                          'limits.min_linear_x': -0.5})
    x = np.linspace(0.0, -10.0, 201)
    backing, _ = trajectory_from_plan(np.zeros(201), x, np.zeros(201), np.zeros(201), config,
                                      vehicle_yaw_rad=0.0)
    assert [leg.reverse for leg in backing.legs] == [True]
    assert backing.vx_mps.min() == pytest.approx(-0.5)
    forwards, _ = trajectory_from_plan(np.zeros(201), -x, np.zeros(201), np.zeros(201), config,
                                       vehicle_yaw_rad=0.0)
    assert forwards.vx_mps.max() == pytest.approx(config.limits.max_linear_x)


@pytest.mark.parametrize('yaw_rad, reversed_legs', [
    # Nav2's grid planners: the identity everywhere but the last pose (the goal's heading)
    ([0.0] * 80 + [math.pi / 2], [False]),
    ([0.0] * 81, [False]),
    ([math.nan] * 81, [False]),
    # real headings: facing west, driven forwards; facing east, backing up
    ([math.pi] * 81, [False]),
    ([0.0] * 40 + [1e-9] + [0.0] * 40, [True]),
])
def test_a_plan_without_headings_is_driven_forwards(yaw_rad, reversed_legs):
    """Found in review: a path going west with NavFn's identity orientations was taken as a
    reversing leg, so the vehicle turned round and backed along it."""
    config = from_flat(ControllerConfig, FIXED_CONTROLLER)
    x = np.linspace(0.0, -4.0, 81)
    trajectory, _ = trajectory_from_plan(np.zeros(81), x, np.zeros(81), yaw_rad, config)
    assert [leg.reverse for leg in trajectory.legs] == reversed_legs
    assert (trajectory.vx_mps.min() < 0.0) == reversed_legs[0]


@pytest.mark.parametrize('model, vehicle_yaw_rad, reverse', [
    ('bicycle', 0.0, True), ('bicycle', math.pi, False), ('bicycle', None, False),
    ('differential', 0.0, False)])
def test_without_headings_a_car_facing_away_from_the_path_backs_along_it(model, vehicle_yaw_rad,
                                                                          reverse):
    """Found in the diff review: Smac Hybrid-A* gives every pose of a straight path backing up
    due west heading exactly 0 (its bins), which reads as no headings: a car facing east was
    told to drive west forwards, which it cannot do without turning round."""
    config = from_flat(ControllerConfig, {**FIXED_CONTROLLER, 'model': model})
    x = np.linspace(0.0, -2.0, 41)
    trajectory, _ = trajectory_from_plan(np.zeros(41), x, np.zeros(41), np.zeros(41), config,
                                         vehicle_yaw_rad=vehicle_yaw_rad)
    assert [leg.reverse for leg in trajectory.legs] == [reverse]


def test_without_headings_each_cusp_flips_the_direction():
    config = from_flat(ControllerConfig, FIXED_CONTROLLER)
    x = np.r_[np.linspace(0.0, 2.0, 41), np.linspace(1.95, 0.0, 40), np.linspace(0.05, 2.0, 40)]
    trajectory, _ = trajectory_from_plan(np.zeros(121), x, np.zeros(121), np.zeros(121), config)
    assert [leg.reverse for leg in trajectory.legs] == [False, True, False]


@pytest.mark.parametrize('velocity_mps, start_mps', [
    ((0.8, 0.0), 0.8), ((0.8, 0.3), 0.8), ((-0.5, 0.0), 0.0), ((0.0, 0.0), 0.0)])
def test_a_plan_without_times_starts_at_the_vehicle_speed_along_it(velocity_mps, start_mps):
    """Found in review: every plan without times was timed from rest, so one replaced every
    second, as Nav2 replans, held the vehicle to a fraction of its top speed."""
    config = from_flat(ControllerConfig, {**FIXED_CONTROLLER, 'limits.max_linear_x': 1.0})
    x = np.linspace(0.0, 4.0, 81)
    trajectory, _ = trajectory_from_plan(np.zeros(81), x, np.zeros(81), np.zeros(81), config,
                                         velocity_mps)
    assert trajectory.v_mps[0] == pytest.approx(start_mps)
    assert trajectory.v_mps[-1] == 0.0


def test_after_a_stop_the_next_trajectory_starts_from_rest():
    """Found in review: after a cancel (``stop``) the output limits started the next plan
    from the last command: 1.79 m/s commanded to a vehicle at rest."""
    config = from_flat(ControllerConfig, {**FIXED_CONTROLLER, 'limits.max_linear_x': 2.0,
                                          'limits.max_linear_acceleration': 1.0})
    ctl = TrackingController(config)
    ctl.follow(straight(), 0.0)
    for k in range(60):
        command = ctl.step(k * 0.05, Pose2D(0.0, 0.0, 0.0)).command  # far behind: full speed
    assert command.vx_mps > 0.9
    ctl.stop()
    ctl.follow(straight(), 3.0)
    assert ctl.step(3.05, Pose2D(0.0, 0.0, 0.0)).command.vx_mps <= 1.0 * 0.05 + 1e-12


@pytest.mark.parametrize('timed', [True, False])
@pytest.mark.parametrize('far_m', [1.5e6, 1e308, -1e308, math.inf, math.nan])
def test_a_plan_reaching_beyond_the_bound_is_refused(far_m, timed):
    """A plan at +-1e308 m, followed from the origin, once gave NaN tracking errors at every
    step; one within the bound is followed (reliability review A3-6)."""
    config = from_flat(ControllerConfig, FIXED_CONTROLLER)
    t = np.arange(3.0) if timed else np.zeros(3)
    with pytest.raises(PlanningError, match=r'plan coordinates reach .* beyond 1e\+06 m'):
        trajectory_from_plan(t, [0.0, 1.0, far_m], [0.0, 0.0, 0.0], np.zeros(3), config)
    trajectory, _ = trajectory_from_plan(t, [0.0, 1.0, 1e6], [0.0, 0.0, -1e6], np.zeros(3),
                                         config)
    assert np.isfinite(trajectory.duration_s)


def test_a_grid_paths_kink_at_its_start_does_not_slow_a_replan():
    """Found with the real NavFn: each path joins the start cell's centre to the descent, 30
    degrees round within 5 cm. Its curvature, taken pose by pose, held the start of every
    replan (every second, as Nav2 replans) to about 0.2 m/s, so the vehicle never reached its
    0.8 m/s; timed along chords of ``UNTIMED_CHORD_M`` the vehicle keeps its speed."""
    config = from_flat(ControllerConfig, {**FIXED_CONTROLLER, 'limits.max_linear_x': 0.8,
                                          'untimed_plans.max_lateral_acceleration': 0.5})
    turn_rad = math.radians(30.0)
    x = np.r_[0.0, -0.05 - 0.025 * np.cos(turn_rad) * np.arange(120)]
    y = np.r_[0.0, 0.0 - 0.025 * np.sin(turn_rad) * np.arange(120)]
    along_mps = 0.6 * np.array([-math.cos(turn_rad), -math.sin(turn_rad)])
    trajectory, _ = trajectory_from_plan(np.zeros(121), x, y, np.zeros(121), config,
                                         tuple(along_mps))
    first_m = trajectory.s_m < 1.0
    assert trajectory.v_mps[first_m].min() > 0.5


def test_a_plan_with_headings_keeps_the_curvature_of_its_poses():
    """Found in the diff review: timed along 0.5 m chords, a car's short legs (a multi-point
    turn, as Smac Hybrid-A* plans them with headings) lost their curvature: two 0.4 m arcs of
    radius 1 m were driven straight, no yaw rate planned. Only plans without headings (grid
    planners') take the chord."""
    config = from_flat(ControllerConfig, {**FIXED_CONTROLLER, 'model': 'bicycle'})
    angle = np.linspace(0.0, 0.4, 9)
    x, y = np.sin(angle), 1.0 - np.cos(angle)  # left turn of radius 1 m from the origin
    trajectory, _ = trajectory_from_plan(np.zeros(9), x, y, angle, config)
    inner = slice(2, -2)
    np.testing.assert_allclose(trajectory.curvature_inv_m[inner], 1.0, rtol=0.02)
    np.testing.assert_allclose(trajectory.yaw_rad[inner], angle[inner], atol=0.01)
