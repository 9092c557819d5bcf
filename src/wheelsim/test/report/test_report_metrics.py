"""Run metrics (wheelsim.report.metrics) against analytic answers on small hand-built bags."""

import json
import math

import numpy as np
import pytest
from std_msgs.msg import Float64MultiArray
from test_report_bag_data import (
    odometry,
    plan,
    pose_estimate,
    straight_run,
    twist_stamped,
    write_bag,
)

from wheelsim.report.bag_data import load_run
from wheelsim.report.metrics import (
    METRIC_NAMES,
    compute_metrics,
    distance_errors_rel,
    localization_errors,
    round_significant,
    tracking_errors,
)


def metrics_of(tmp_path, records, **kwargs):
    return compute_metrics(load_run(write_bag(tmp_path / 'bag', records)), **kwargs)


@pytest.mark.parametrize('offset_m', [0.1, -0.25])
def test_straight_line_offset_gives_cross_track_equal_to_offset(tmp_path, offset_m):
    m = metrics_of(tmp_path, straight_run(offset_m=offset_m), goal_tolerance_m=0.3)
    assert m['cross_track_rms_m'] == pytest.approx(abs(offset_m), rel=1e-9)
    assert m['cross_track_max_m'] == pytest.approx(abs(offset_m), rel=1e-9)
    assert m['heading_error_rms_rad'] == 0.0
    assert m['along_track_rms_m'] == pytest.approx(0.0, abs=1e-9)
    assert m['goal_position_error_m'] == pytest.approx(abs(offset_m))
    assert m['plans_received'] == 1
    assert m['distance_travelled_m'] == pytest.approx(10.0)


def test_cross_track_sign_is_left_positive(tmp_path):
    run = load_run(write_bag(tmp_path / 'bag', straight_run(offset_m=-0.2)))
    np.testing.assert_allclose(tracking_errors(run).cross_track_m, -0.2)


def test_late_vehicle_has_negative_along_track_error(tmp_path):
    run = load_run(write_bag(tmp_path / 'bag', straight_run(offset_m=0.0, delay_s=0.5)))
    errors = tracking_errors(run)
    middle = (errors.t_s >= 1.0) & (errors.t_s <= 10.0)
    np.testing.assert_allclose(errors.along_track_m[middle], -0.5, atol=1e-9)
    np.testing.assert_allclose(errors.cross_track_m, 0.0, atol=1e-12)


def test_a_vehicle_behind_the_start_or_past_the_end_is_along_track_not_cross_track(tmp_path):
    """Found in review: with noisy localization the plan starts at the estimated pose, 5.6 cm
    ahead of the vehicle; the vehicle's distance to the plan's first pose was taken for
    cross-track error, and every shipped run had cross_track_max_m 0.0562. Before the start
    and past the end the errors are measured along the extended end segments, as the
    controller measures them."""
    records = [('/plan', plan(0.0, [(0.1 * i, 0.1 * i, 0.0, 0.0) for i in range(101)]), 0.0)]
    for t in np.arange(0, 601) / 50:  # from 0.5 m behind the start to 0.5 m past the end
        records.append(('/ground_truth', odometry(t, t - 0.5, 0.02, 0.0), t))
    run = load_run(write_bag(tmp_path / 'bag', records))
    errors = tracking_errors(run)
    np.testing.assert_allclose(errors.cross_track_m, 0.02, atol=1e-12)
    behind = errors.t_s < 0.5
    np.testing.assert_allclose(errors.along_track_m[behind], -0.5, atol=1e-9)
    past = errors.t_s > 10.5  # the plan ended at 10 m: ahead of it by the distance past it
    np.testing.assert_allclose(errors.along_track_m[past], errors.t_s[past] - 10.5, atol=1e-9)
    m = compute_metrics(run, goal_tolerance_m=0.3)
    assert m['cross_track_max_m'] == pytest.approx(0.02, rel=1e-9)  # 0.5 before


def test_a_plan_without_length_measures_the_distance_to_its_point(tmp_path):
    """A turn on the spot (several poses, one position): no direction to extend (found in
    review: the first fix measured along the heading line, 0.088 m for a vehicle 0.1 m off)."""
    poses = [(0.5 * i, 1.0, 2.0, 0.5 * i) for i in range(4)]
    records = [('/plan', plan(0.0, poses), 0.0),
               ('/ground_truth', odometry(0.0, 1.06, 2.08, 0.0), 0.0),
               ('/ground_truth', odometry(1.0, 1.06, 2.08, 1.0), 1.0)]
    errors = tracking_errors(load_run(write_bag(tmp_path / 'bag', records)))
    np.testing.assert_allclose(np.abs(errors.cross_track_m), 0.1, atol=1e-12)


def test_heading_error_wraps_around_pi(tmp_path):
    """Plan westwards (heading pi); the vehicle heads -pi + 0.01: 0.01 rad off, not 2 pi."""
    records = [('/plan', plan(0.0, [(t, -t, 0.0, np.pi) for t in range(11)]), 0.0)]
    records += [('/ground_truth', odometry(t, -t, 0.0, -np.pi + 0.01), t)
                for t in np.arange(0, 501) / 50]
    errors = tracking_errors(load_run(write_bag(tmp_path / 'bag', records)))
    np.testing.assert_allclose(errors.heading_rad, 0.01, atol=1e-9)


def test_single_pose_plan_measures_distance_to_it(tmp_path):
    """A plan of one pose (a goal): cross-track is the distance to it; no schedule."""
    records = [('/plan', plan(0.0, [(0.0, 3.0, 4.0, 0.0)]), 0.0),
               ('/ground_truth', odometry(0.0, 0.0, 0.0, 0.0), 0.0),
               ('/ground_truth', odometry(1.0, 3.0, 4.0, 0.0), 1.0)]
    m = metrics_of(tmp_path, records)
    assert m['cross_track_max_m'] == pytest.approx(5.0)
    assert m['cross_track_rms_m'] == pytest.approx(5.0 / np.sqrt(2), rel=1e-5)  # 6 digits
    assert m['along_track_rms_m'] is None
    assert m['time_to_goal_s'] == pytest.approx(1.0)


def test_time_to_goal_is_first_time_within_tolerance_for_good(tmp_path):
    # Offset 0.1 m, tolerance 0.15 m: inside once x >= 10 - sqrt(0.15^2 - 0.1^2) = 9.888 m,
    # first reached at the 50 Hz sample t = 9.90 s (x = 9.90), and it stays there.
    m = metrics_of(tmp_path, straight_run(offset_m=0.1), goal_tolerance_m=0.15)
    assert m['time_to_goal_s'] == pytest.approx(9.9)


def test_a_vehicle_that_never_left_the_goal_of_a_closed_route_has_not_reached_it(tmp_path):
    """Found in review: the default scenario's figure eight ends where it starts, and a vehicle
    standing still had time_to_goal_s 0 (the best a tune could find)."""
    loop = [(t, 2.0 * math.sin(t * math.pi / 5), 1.0 - math.cos(t * math.pi / 5), 0.0)
            for t in range(11)]  # a circle of radius 1 m through (0, 0), back to it at 10 s
    records = [('/plan', plan(1.0, loop), 1.0)]
    records += [('/ground_truth', odometry(t, 0.02, 0.0, 0.0), t) for t in np.arange(0, 13)]
    m = metrics_of(tmp_path, records, goal_tolerance_m=0.1)
    assert m['time_to_goal_s'] is None
    assert m['goal_position_error_m'] == pytest.approx(0.02)
    # the vehicle that drove it (left the goal, came back) has
    records += [('/ground_truth', odometry(t, *loop[int(t) - 12][1:]), t) for t in range(13, 23)]
    records += [('/ground_truth', odometry(23.0, 0.0, 0.0, 0.0), 23.0)]
    assert metrics_of(tmp_path / 'driven', records,
                      goal_tolerance_m=0.1)['time_to_goal_s'] == pytest.approx(21.0)
    # a plan that stays within the tolerance (a turn on the spot) is reached where it starts
    turn = [(0.5 * i, 0.0, 0.0, 0.5 * i) for i in range(4)]
    records = [('/plan', plan(0.0, turn), 0.0),
               *(('/ground_truth', odometry(t, 0.0, 0.0, 0.0), t) for t in range(3))]
    assert metrics_of(tmp_path / 'turn', records,
                      goal_tolerance_m=0.1)['time_to_goal_s'] == pytest.approx(0.0)


def test_goal_passed_but_not_held_is_not_reached(tmp_path):
    records = straight_run(offset_m=0.0, end_s=10.0)
    records.append(('/ground_truth', odometry(10.5, 11.0, 0.0, 0.0), 10.5))  # overshoots
    m = metrics_of(tmp_path, records, goal_tolerance_m=0.2)
    assert m['time_to_goal_s'] is None
    assert m['goal_position_error_m'] == pytest.approx(1.0)


def test_goal_heading_tolerance(tmp_path):
    records = straight_run(offset_m=0.0)
    records.append(('/ground_truth', odometry(12.5, 10.0, 0.0, 0.3), 12.5))
    m = metrics_of(tmp_path, records, goal_tolerance_m=0.1, goal_yaw_tolerance_rad=0.2)
    assert m['time_to_goal_s'] is None
    assert m['goal_heading_error_rad'] == pytest.approx(0.3)
    assert metrics_of(tmp_path / 'again', records, goal_tolerance_m=0.1,
                      goal_yaw_tolerance_rad=0.4)['time_to_goal_s'] == pytest.approx(9.9)


def circle(radius_m, phase_rad):
    return (radius_m * np.cos(phase_rad), radius_m * np.sin(phase_rad), phase_rad + np.pi / 2)


def test_concentric_circle_gives_radius_difference(tmp_path):
    """Counter-clockwise plan of radius 2 m (720 vertices, chord sag 2e-5 m); the vehicle on
    radius 2.05 m is 0.05 m to the right of it, with the plan's heading."""
    phase = np.linspace(0.0, 2 * np.pi, 721)
    records = [('/plan', plan(0.0, [(10 * p / (2 * np.pi), *circle(2.0, p)) for p in phase]),
                0.0)]
    for t in np.arange(0, 501) / 50:
        records.append(('/ground_truth', odometry(t, *circle(2.05, 2 * np.pi * t / 10)), t))
    run = load_run(write_bag(tmp_path / 'bag', records))
    errors = tracking_errors(run)
    np.testing.assert_allclose(errors.cross_track_m, -0.05, atol=3e-5)
    np.testing.assert_allclose(errors.heading_rad, 0.0, atol=2e-4)
    np.testing.assert_allclose(errors.along_track_m, 0.0, atol=1e-3)
    m = compute_metrics(run)
    assert m['cross_track_rms_m'] == pytest.approx(0.05, abs=3e-5)


def test_plan_length_curvature_and_turning(tmp_path):
    """The latest plan: a full circle of radius 2 m (720 steps) is 4 pi m long, bends 0.5 1/m
    and turns 2 pi less the one step's turn its ends leave out; a straight plan before it does
    not count."""
    phase = np.linspace(0.0, 2 * np.pi, 721)
    records = [('/plan', plan(0.0, [(t, t, 0.0, 0.0) for t in range(11)]), 0.0),
               ('/plan', plan(1.0, [(1 + p, *circle(2.0, p)) for p in phase]), 1.0),
               ('/ground_truth', odometry(1.0, 2.0, 0.0, np.pi / 2), 1.0)]
    m = metrics_of(tmp_path, records)
    assert m['plan_length_m'] == pytest.approx(4 * np.pi, rel=1e-5)
    assert m['plan_max_curvature_inv_m'] == pytest.approx(0.5, rel=1e-4)
    assert m['plan_total_turning_rad'] == pytest.approx(2 * np.pi * 719 / 720, rel=1e-6)


def test_a_reversing_plan_turns_only_where_it_bends(tmp_path):
    """Forwards 5 m, then back 3 m along the same line (a cusp): 8 m, no turning."""
    poses = [(t, t, 0.0, 0.0) for t in range(6)] + [(5 + t, 5 - t, 0.0, 0.0) for t in (1, 2, 3)]
    m = metrics_of(tmp_path, [('/plan', plan(0.0, poses), 0.0),
                              ('/ground_truth', odometry(0.0, 0.0, 0.0, 0.0), 0.0)])
    assert m['plan_length_m'] == pytest.approx(8.0)
    assert m['plan_max_curvature_inv_m'] == 0.0
    assert m['plan_total_turning_rad'] == 0.0


def test_figure_eight_crossing_keeps_its_branch(tmp_path):
    """The vehicle drives 0.02 m left of a lemniscate. Near the crossing the other branch is as
    close as its own; matching must not jump to it (a jump shows as a 90 degree heading error)."""
    phase = np.linspace(0.0, 2 * np.pi, 2001)
    x, y = 3 * np.sin(phase), 1.5 * np.sin(2 * phase)
    yaw = np.arctan2(3 * np.cos(2 * phase), 3 * np.cos(phase))
    records = [('/plan', plan(0.0, list(zip(20 * phase / (2 * np.pi), x, y, yaw,
                                            strict=True))), 0.0)]
    for i in range(0, 2001, 2):
        t = 20 * phase[i] / (2 * np.pi)
        left = (x[i] - 0.02 * np.sin(yaw[i]), y[i] + 0.02 * np.cos(yaw[i]))
        records.append(('/ground_truth', odometry(t, *left, yaw[i]), t))
    errors = tracking_errors(load_run(write_bag(tmp_path / 'bag', records)))
    assert np.max(np.abs(errors.heading_rad)) < 1e-3
    np.testing.assert_allclose(errors.cross_track_m, 0.02, atol=1e-4)
    np.testing.assert_allclose(errors.along_track_m, 0.0, atol=0.01)


def test_replanning_measures_against_the_plan_in_effect(tmp_path):
    """Plan 1 along +x; at t = 5 s plan 2 turns to +y from (5, 0). The vehicle follows each
    exactly, so every error is zero; the goal is the end of plan 2."""
    first = plan(0.0, [(t, t, 0.0, 0.0) for t in range(11)])
    second = plan(5.0, [(5 + t, 5.0, float(t), np.pi / 2) for t in range(6)])
    records = [('/plan', first, 0.0), ('/plan', second, 5.0)]
    for t in np.arange(0, 551) / 50:
        pose = (t, 0.0, 0.0) if t < 5 else (5.0, min(t - 5, 5.0), np.pi / 2)
        records.append(('/ground_truth', odometry(t, *pose), t))
    m = metrics_of(tmp_path, records, goal_tolerance_m=0.01)
    assert m['cross_track_max_m'] == pytest.approx(0.0, abs=1e-12)
    assert m['heading_error_max_rad'] == pytest.approx(0.0, abs=1e-12)
    assert m['along_track_max_m'] == pytest.approx(0.0, abs=1e-9)
    assert m['plans_received'] == 2
    assert m['goal_position_error_m'] == pytest.approx(0.0, abs=1e-12)
    assert m['time_to_goal_s'] == pytest.approx(10.0)


def test_localization_offset_is_measured_at_matching_and_between_stamps(tmp_path):
    records = straight_run(offset_m=0.0)
    for i in range(0, 600, 3):  # every third ground-truth stamp, and midway between two
        t = i / 50 + (0.01 if i % 2 else 0.0)
        x = min(t, 10.0)
        records.append(('/pose', pose_estimate(t, x + 0.03, 0.04, 0.1), t))
    m = metrics_of(tmp_path, records)
    assert m['localization_position_rms_m'] == pytest.approx(0.05)
    assert m['localization_position_max_m'] == pytest.approx(0.05)
    assert m['localization_heading_rms_rad'] == pytest.approx(0.1)
    assert m['localization_heading_max_rad'] == pytest.approx(0.1)


def test_odometry_drift_after_aligning_its_start(tmp_path):
    """True path: 10 m north from (1, 2); odometry (own frame, starting at its origin facing
    +x) measures 2 % too far. Drift at the end: 0.2 m, 2 % of the distance, no heading drift."""
    records = []
    for t in np.arange(0, 501) / 50:
        records.append(('/ground_truth', odometry(t, 1.0, 2.0 + t, np.pi / 2), t))
        records.append(('/odom', odometry(t, 1.02 * t, 0.0, 0.0, frame='odom'), t))
    run = load_run(write_bag(tmp_path / 'bag', records))
    m = compute_metrics(run)
    assert m['odom_drift_end_m'] == pytest.approx(0.2)
    assert m['odom_drift_per_distance'] == pytest.approx(0.02)
    assert m['odom_heading_drift_end_rad'] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(localization_errors(run).odom_position_m,
                               0.02 * np.arange(501) / 50, atol=1e-12)


def commanded_and_actual(command: dict, actual: dict) -> list:
    """Commands ``command`` at 10 Hz from t = 1 s to 6 s; ``twist_actual`` at 50 Hz from 0 to
    6 s: ``actual``, but vx 5 m/s before the first command (never compared)."""
    records = [('/cmd_vel', twist_stamped(1.0 + 0.1 * i, **command), 1.0 + 0.1 * i)
               for i in range(50)]
    return records + [('/twist_actual', twist_stamped(t, **{**actual, 'vx': actual['vx']
                                                          if t >= 1 else 5.0}), t)
                      for t in np.arange(0, 301) / 50]


def test_commanded_vs_actual_velocity(tmp_path):
    """Commands held until the next; actual 0.1 m/s slower, same yaw rate."""
    m = metrics_of(tmp_path, commanded_and_actual({'vx': 1.0, 'wz': 0.5}, {'vx': 0.9, 'wz': 0.5}))
    assert m['cmd_vs_actual_vx_rms_mps'] == pytest.approx(0.1)
    assert m['cmd_vs_actual_vy_rms_mps'] == 0.0
    assert m['cmd_vs_actual_wz_rms_radps'] == 0.0


def test_distance_travelled_against_commanded_per_axis(tmp_path):
    """An omni base commanded 1 m/s forward and 0.5 m/s sideways travels 0.9 and 0.4 m/s:
    10 % short forward, 20 % sideways; the samples before the first command are not counted."""
    records = commanded_and_actual({'vx': 1.0, 'vy': 0.5}, {'vx': 0.9, 'vy': 0.4})
    m = metrics_of(tmp_path, records)
    assert m['distance_error_x_rel'] == pytest.approx(0.1)
    assert m['distance_error_y_rel'] == pytest.approx(0.2)
    planar_commanded, planar_actual = math.hypot(1.0, 0.5), math.hypot(0.9, 0.4)
    assert m['distance_error_rel'] == pytest.approx(1 - planar_actual / planar_commanded,
                                                    rel=1e-5)
    only_forward = [(topic, twist_stamped(msg.header.stamp.sec + msg.header.stamp.nanosec / 1e9,
                                          vx=msg.twist.linear.x), t)
                    for topic, msg, t in records]
    m = metrics_of(tmp_path / 'forward', only_forward)
    assert m['distance_error_y_rel'] is None  # never commanded sideways


def distance_errors_of(dt_s, actual_vx, command_vx):
    return distance_errors_rel(np.asarray(dt_s), np.asarray(actual_vx), np.zeros(len(dt_s)),
                               np.asarray(command_vx), np.zeros(len(dt_s)))


def test_distance_errors_count_reversing_as_distance():
    # 1 s forward then 1 s backward at 0.5 m/s commanded; 0.6 m/s driven: 20 % more distance.
    errors = distance_errors_of([1.0, 1.0], [0.6, -0.6], [0.5, -0.5])
    assert errors['distance_error_x_rel'] == pytest.approx(0.2)
    assert np.isnan(errors['distance_error_y_rel'])


def test_missing_topics_give_null_metrics(tmp_path):
    records = [('/ground_truth', odometry(0.02 * i, 0.02 * i, 0.0, 0.0), 0.02 * i)
               for i in range(50)]
    m = metrics_of(tmp_path, records)
    assert list(m) == list(METRIC_NAMES)
    present = {'distance_travelled_m', 'plans_received'}
    assert all(m[name] is None for name in METRIC_NAMES if name not in present)
    assert m['plans_received'] == 0
    empty = metrics_of(tmp_path / 'empty', [])
    assert empty['distance_travelled_m'] is None and empty['plans_received'] == 0


def test_same_run_gives_byte_identical_json(tmp_path):
    records = straight_run(offset_m=0.123456789, delay_s=0.3)
    records.append(('/tracking_error', Float64MultiArray(data=[1.0]), 0.0))
    first = json.dumps(metrics_of(tmp_path / 'a', records), sort_keys=True)
    second = json.dumps(metrics_of(tmp_path / 'b', records), sort_keys=True)
    assert first == second
    assert json.loads(first)['cross_track_rms_m'] == 0.123457


@pytest.mark.parametrize(('value', 'expected'), [
    (0.1234567891, 0.123457), (123456789.0, 123457000.0), (-2.5e-9, -2.5e-9), (3, 3),
    (None, None), (math.nan, None), (math.inf, None)])
def test_round_significant(value, expected):
    assert round_significant(value) == expected


def test_goal_tolerance_must_be_positive(tmp_path):
    run = load_run(write_bag(tmp_path / 'bag', []))
    with pytest.raises(ValueError, match='goal_tolerance_m = 0.0: must be > 0'):
        compute_metrics(run, goal_tolerance_m=0.0)


def test_a_plan_with_a_cusp_is_matched_leg_by_leg(tmp_path):
    """Forwards 4 m along x at 1 m/s, then backwards: 2 m straight back over the same line,
    then a quarter circle (radius 2 m) away from it. The vehicle drives the plan 1 cm to the
    right of its direction of travel. Over the shared line both legs are as close: matched with
    the whole plan, the vehicle backing away was held to the first leg until 2 m off it (the
    default car's 6 m square showed 1.99 m)."""
    ahead = [(0.1 * k, 0.1 * k, 0.0, 0.0) for k in range(41)]
    back = [(4.0 + 0.1 * k, 4.0 - 0.1 * k, 0.0, 0.0) for k in range(1, 21)]
    arc = [(6.0 + 0.1 * k, 2.0 - 2.0 * math.sin(0.05 * k), 2.0 - 2.0 * math.cos(0.05 * k),
            -0.05 * k) for k in range(1, 32)]  # backwards: the heading is -phi
    poses = ahead + back + arc
    records = [('/plan', plan(0.0, poses), 0.0)]
    for t, x, y, yaw in poses:
        right = 0.01 if t <= 4.0 else -0.01  # of the direction of travel
        records.append(('/ground_truth', odometry(t, x + right * math.sin(yaw),
                                                  y - right * math.cos(yaw), yaw), t))
    errors = tracking_errors(load_run(write_bag(tmp_path / 'bag', records)))
    assert len(errors.cross_track_m) == len(poses)
    np.testing.assert_allclose(np.abs(errors.cross_track_m), 0.01, atol=1e-3)
