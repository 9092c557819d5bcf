"""The one-screen run summary (wheelsim.report.summary)."""

import math

import pytest

from wheelsim.report.metrics import METRIC_NAMES
from wheelsim.report.summary import format_summary, passes

METRICS = {name: None for name in METRIC_NAMES} | {
    'cross_track_rms_m': 0.0123, 'cross_track_max_m': 0.0456,
    'heading_error_rms_rad': math.radians(2.0), 'heading_error_max_rad': math.radians(5.0),
    'goal_position_error_m': 0.031, 'goal_heading_error_rad': math.radians(1.5),
    'time_to_goal_s': 41.2, 'odom_drift_end_m': 0.3, 'odom_drift_per_distance': 0.012,
    'distance_travelled_m': 25.0, 'plans_received': 1,
    'plan_length_m': 19.2451, 'plan_max_curvature_inv_m': 0.998651,
}


def test_main_metrics_fit_one_screen_with_units():
    text = format_summary(METRICS, {'wall_time_s': 1.234, 'simulated_time_s': 60.0,
                                    'real_time_factor': 48.6}, output_dir='results/eight')
    lines = text.splitlines()
    assert len(lines) <= 20 and max(len(line) for line in lines) <= 100
    assert lines[0] == 'run: 60.0 s simulated in 1.23 s wall time (49x real time)'
    assert 'cross-track RMS / max        0.0123 / 0.0456 m' in text
    assert 'heading RMS / max            2 / 5 deg' in text
    assert 'final error                  0.031 m, 1.5 deg' in text
    assert 'time to goal                 41.2 s' in text
    assert 'odometry drift at end        0.3 m (1.2 % of 25 m), -' in text
    assert 'position RMS / max           - / - m' in text
    assert 'length, max curvature        19.25 m, 0.9987 1/m' in text
    assert 'total turning                -' in text
    assert lines[-1] == 'results: results/eight'


@pytest.mark.parametrize(('factor', 'shown'), [
    (0.04, '0.04x'), (0.5, '0.5x'), (0.0123, '0.012x'), (1.0, '1x'), (48.6, '49x'),
    (5234.0, '5,200x'), (1.23e6, '1,200,000x')])
def test_a_slow_real_time_factor_is_shown_not_rounded_to_zero(factor, shown):
    """Found in review: a run paced at 0.04 (or 0.5) printed "(0x real time)"."""
    text = format_summary(METRICS, {'real_time_factor': factor})
    assert text.splitlines()[0] == f'run: ({shown} real time)'


def test_the_real_time_factor_is_rounded_once():
    """Found in review: 30 s in 0.285 s is 105.26x, which timing.json holds as 105 and the
    summary printed as 100x, rounding a second time."""
    text = format_summary(METRICS, {'wall_time_s': 0.285, 'simulated_time_s': 30.0,
                                    'real_time_factor': 105.0})
    assert text.splitlines()[0] == 'run: 30.0 s simulated in 0.28 s wall time (110x real time)'
    # a wall time of milliseconds, whose rounding to the ms changes the factor: timing.json's
    text = format_summary(METRICS, {'wall_time_s': 0.002, 'simulated_time_s': 0.1,
                                    'real_time_factor': 66.7})
    assert text.splitlines()[0].endswith('(67x real time)')


@pytest.mark.parametrize(('plans', 'expected'), [(1, 'not reached'), (0, '- (no plan)')])
def test_goal_not_reached_or_no_plan(plans, expected):
    text = format_summary(METRICS | {'time_to_goal_s': None, 'plans_received': plans})
    assert f'time to goal                 {expected}' in text


def test_pass_criteria_verdicts_and_missing_metric_fails():
    criteria = {'cross_track_rms_m': 0.01, 'time_to_goal_s': 50.0,
                'localization_position_rms_m': 0.1}
    text = format_summary(METRICS, pass_criteria=criteria)
    assert 'cross_track_rms_m            0.0123 <= 0.01  FAIL' in text
    assert 'time_to_goal_s               41.2 <= 50  pass' in text
    assert 'localization_position_rms_m  - <= 0.1  FAIL' in text


def test_larger_is_better_metrics_have_lower_bounds():
    """Found in review: an upper bound on min_clearance_m passed a run that scraped a wall."""
    metrics = {**METRICS, 'min_clearance_m': 0.02, 'distance_travelled_m': 12.0}
    text = format_summary(metrics, pass_criteria={'min_clearance_m': 0.2,
                                                  'distance_travelled_m': 10.0})
    assert 'min_clearance_m       0.02 >= 0.2  FAIL' in text
    assert 'distance_travelled_m  12 >= 10  pass' in text


@pytest.mark.parametrize(('metric', 'value', 'bound', 'expected'), [
    ('cross_track_rms_m', 0.1, 0.1, True), ('cross_track_rms_m', 0.11, 0.1, False),
    ('cross_track_rms_m', None, 1e9, False), ('collisions', 0, 0, True),
    ('min_clearance_m', 0.2, 0.2, True), ('min_clearance_m', 0.19, 0.2, False),
    ('min_clearance_m', 0.5, 0.2, True), ('plans_received', None, 0, False)])
def test_passes(metric, value, bound, expected):
    assert passes(metric, value, bound) is expected
