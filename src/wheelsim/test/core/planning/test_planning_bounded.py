"""Curvature-bounded paths that never loop: the optimised spline, fallback legs, refusals.

Reference geometry: the default scenario's figure-eight (waypoints on x = 3 sin t, y = 1.5 sin 2t,
a curve 18.3 m long turning 3 pi rad, from a vehicle at the origin facing +x) and the
minimum-jerk spline through the same waypoints without a bound (the waypoints' shortest smooth
curve), whose length and turning a bounded path must stay close to.
"""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.params import from_flat
from wheelsim.core.planning import curvature
from wheelsim.core.planning.config import PlannerConfig
from wheelsim.core.planning.curvature import bounded_path, optimised
from wheelsim.core.planning.path import PlanningError, path_shape
from wheelsim.core.planning.planner import plan_waypoints
from wheelsim.core.planning.spline import minimum_jerk_spline, spline_through
from wheelsim.core.planning.spline_bound import MAX_SPEED, WINDOW_MARGIN, check_segments
from wheelsim.core.planning.waypoints import figure_eight, waypoints_from_lists
from wheelsim.testing.configs import FIXED_PLANNER, planner_for

NAN = math.nan
#: The default scenario's figure-eight waypoints (run/scenarios/default.yaml).
SCENARIO_FIGURE_EIGHT = [
    2.121, 1.5, NAN, 3.0, 0.0, NAN, 2.121, -1.5, NAN, 0.0, 0.0, NAN,
    -2.121, 1.5, NAN, -3.0, 0.0, NAN, -2.121, -1.5, NAN, 0.0, 0.0, NAN,
]


def forward(driven):
    """The one forward piece of a driven path and its waypoints' arc lengths."""
    assert driven.reverse == (False,)
    return driven.pieces[0], driven.knot_s_m


def turning(path):
    """Total turning (rad) of a sampled path (|curvature| integrated)."""
    return float(np.abs(np.diff(path.yaw_rad)).sum())


def assert_passes_every_waypoint(path, knot_s, points):
    for i, point in enumerate(points):
        x = np.interp(knot_s[i], path.s_m, path.x_m)
        y = np.interp(knot_s[i], path.s_m, path.y_m)
        assert math.hypot(x - point[0], y - point[1]) < 1e-6, i


def test_the_default_figure_eight_is_planned_within_the_bound_and_20_m():
    """It was planned as 38 m of Dubins loops (final yaw 19.99 rad) with max_curvature 1."""
    config = from_flat(PlannerConfig, {**FIXED_PLANNER, 'waypoints': SCENARIO_FIGURE_EIGHT,
                                       'limits.max_curvature': 1.0})
    warnings: list[str] = []
    trajectory = plan_waypoints(config, Pose2D(0.0, 0.0, 0.0), warnings)
    assert trajectory.length_m <= 20.0
    assert np.abs(trajectory.curvature_inv_m).max() <= 1.0
    assert path_shape(trajectory.x_m, trajectory.y_m).max_curvature_inv_m <= 1.0 + 1e-3
    assert abs(trajectory.yaw_rad[-1]) < 2.0  # about once round each loop, not three times
    assert warnings == []  # no fallback leg: the optimised curve keeps the bound everywhere


@pytest.mark.parametrize('max_curvature', [1.0, 1.2])
def test_a_bounded_figure_eight_turns_as_much_as_its_smooth_curve_no_loop(max_curvature):
    """Loop-freedom: the bounded path turns within half a turn of the unbounded smooth curve
    through the same waypoints (a loop adds 2 pi) and is hardly longer."""
    waypoints = waypoints_from_lists(
        [[0.0, 0.0, 0.0]] + np.reshape(SCENARIO_FIGURE_EIGHT, (-1, 3))[:, :2].tolist())
    smooth, _ = spline_through(waypoints)
    path, knot_s = forward(bounded_path(waypoints, max_curvature))
    assert np.abs(path.curvature_inv_m).max() <= max_curvature
    assert turning(path) <= turning(smooth) + math.pi / 2
    assert path.length_m <= smooth.length_m * 1.1
    assert_passes_every_waypoint(path, knot_s, waypoints.xy_m)


def test_a_path_within_the_bound_is_the_smooth_curve_itself():
    waypoints = waypoints_from_lists(figure_eight(14.0))  # curvature up to 0.21 1/m
    smooth, _ = spline_through(waypoints)
    path, _ = forward(bounded_path(waypoints, 0.25))
    np.testing.assert_array_equal(path.x_m, smooth.x_m)


def test_a_u_turn_tighter_than_the_bound_falls_back_on_that_leg_only_and_says_so():
    """4 m between the lanes, a 2.5 m turning radius: the U-turn leg is a continuous-curvature
    Dubins leg, the straights stay straight."""
    points = [[0, 0, 0.0], [10, 0, 0.0], [10, 4, math.pi], [0, 4, math.pi]]
    warnings: list[str] = []
    path, knot_s = forward(bounded_path(waypoints_from_lists(points), 0.4, warnings=warnings))
    assert len(warnings) == 1
    assert 'waypoints 1 (10, 0) and 2 (10, 4)' in warnings[0]
    assert 'continuous-curvature Dubins' in warnings[0]
    assert np.abs(path.curvature_inv_m).max() <= 0.4 + 1e-9
    assert np.abs(np.diff(path.curvature_inv_m)).max() < 0.02  # continuous
    np.testing.assert_allclose(knot_s[1], 10.0, atol=1e-6)  # the first lane is straight
    np.testing.assert_allclose(knot_s[3] - knot_s[2], 10.0, atol=1e-6)
    assert turning(path) < 2 * math.pi  # a U-turn and back, no loop
    assert_passes_every_waypoint(path, knot_s, points)


def zigzag(count: int, corner_deg: float) -> list[list[float]]:
    """``count`` waypoints 1 m apart turning by ``corner_deg`` left and right in turn."""
    points, heading = [[0.0, 0.0, 0.0]], 0.0
    for i in range(count - 1):
        x, y = points[-1][:2]
        points.append([x + math.cos(heading), y + math.sin(heading), NAN])
        heading += math.radians(corner_deg) * (1 if i % 2 == 0 else -1)
    return points


def test_each_leg_that_falls_back_bends_again_only_the_legs_near_it(monkeypatch):
    """Found in review: a zigzag of 50 waypoints with 165 deg corners, where every leg falls
    back, took 64 s of CPU: after each fallback every leg still broken was bent again, n passes
    over n legs. Only the legs whose windows hold the fallen-back leg's ends are bent again
    (7.9 s, the same plan)."""
    bent = []

    def counting(spline, freedom, bound, segments):
        bent.append(len(segments))
        return bend_within(spline, freedom, bound, segments)

    bend_within = curvature.bend_within
    monkeypatch.setattr(curvature, 'bend_within', counting)
    points = zigzag(16, 165.0)
    driven = bounded_path(waypoints_from_lists(points), 1.0, reverse=True)
    assert bent[0] == len(points) - 1  # every leg broke the bound at first
    assert max(bent[1:]) <= 2 * (WINDOW_MARGIN + 1) + 1, bent
    for piece in driven.pieces:
        assert np.abs(piece.curvature_inv_m).max() <= 1.0 + 1e-9


def test_unbounded_paths_only_lose_their_cusps():
    """No bound (differential): the spline through points whose headings force it to nearly
    stop is bent to keep moving, within no bound but without a fallback."""
    points = [[0, 0, 0.0], [1, 0, math.pi / 2], [1, 1, math.pi]]
    warnings: list[str] = []
    path, knot_s = forward(bounded_path(waypoints_from_lists(points), 0.0, 1.0, warnings))
    assert warnings == []
    assert_passes_every_waypoint(path, knot_s, points)


def test_a_part_of_a_route_names_its_waypoints_by_their_index_in_the_route():
    """``first_index``: the planner plans a holonomic route in parts between turn-backs; the
    messages name the route's waypoints."""
    points = [[0, 0], [2, 0], [1, 0]]
    for first_index in (0, 4):
        warnings: list[str] = []
        bounded_path(waypoints_from_lists(points), 0.0, 2.0, warnings, first_index=first_index)
        assert f'waypoints {first_index} (0, 0) and {first_index + 1} (2, 0)' in warnings[0]
    with pytest.raises(PlanningError, match='near waypoint 7 '):
        bounded_path(waypoints_from_lists([[0, 0, 0.0], [1, 0, math.pi]]), first_index=6)


@settings(max_examples=25, deadline=None)
@given(
    steps=st.lists(st.tuples(st.floats(1.0, 4.0), st.floats(-1.5, 1.5)), min_size=2, max_size=8),
    max_curvature=st.sampled_from([0.3, 0.5, 1.0, 2.0]),
)
# Within the bound at the check's samples, 1.6e-5 and 5.6e-6 over it between them, at samples
# of the path (hypothesis found both): the check now also looks at the path's samples.
@example(steps=[(1.798828125, 0.137672124007866), (3.216111340353344, 0.21484375),
                (2.0, -0.9872181330390627), (3.5, 1.3984375), (3.0, 0.0), (2.6875, 0.0),
                (1.0, -1.5), (1.0, 0.0)], max_curvature=1.0)
@example(steps=[(3.625, 0.0), (2.0, -1.5), (2.375, -1.0), (1.0, -1.0)], max_curvature=1.0)
def test_a_route_is_planned_within_the_bound_or_refused_naming_its_waypoints(steps, max_curvature):
    """Any route (steps of 1-4 m, turning up to 86 degrees at each waypoint): either a path that
    passes every waypoint within the bound, or a refusal naming two consecutive waypoints."""
    heading, points = 0.0, [[0.0, 0.0, 0.0]]
    for length, turn in steps:
        heading += turn
        x, y = points[-1][:2]
        points.append([x + length * math.cos(heading), y + length * math.sin(heading)])
    try:
        path, knot_s = forward(bounded_path(waypoints_from_lists(points), max_curvature))
    except PlanningError as err:
        assert 'cannot be driven' in str(err) and 'waypoints ' in str(err)
        return
    assert np.abs(path.curvature_inv_m).max() <= max_curvature * (1 + 1e-9)
    assert_passes_every_waypoint(path, knot_s, points)


def test_a_car_square_from_a_start_pose_millimetres_off_has_no_bulging_leg():
    """The default car (turning radius 4.3 m, reversing) on a 6 m square, from start poses
    within millimetres of the origin. The spline left between Reeds-Shepp legs was optimised
    with unbounded second derivatives into curves that kept the bound by bulging out: plans of
    6.1 km, 1.1 km and 92 km from the last three of these start poses (the first three: 47-49
    m). Now no spline segment is more than MAX_SPEED times longer than its chord, and every
    plan is short."""
    square = [6.0, 0.0, NAN, 6.0, 6.0, NAN, 0.0, 6.0, NAN, 0.0, 0.0, NAN]
    config = planner_for({'model': 'bicycle'}, {'waypoints': square})
    assert config.reverses and config.limits.max_curvature == pytest.approx(0.2309, abs=1e-4)
    offsets = np.random.default_rng(0).normal(0.0, 0.003, (40, 3))[[0, 1, 2, 8, 21, 39]]
    lengths = [plan_waypoints(config, Pose2D(*offset)).length_m for offset in offsets]
    assert max(lengths) < 1.25 * min(lengths), sorted(lengths)
    waypoints = waypoints_from_lists(
        [[0.0027104105449554257, 0.0002820368932826237, -0.0022304977480614254]]
        + np.reshape(square, (-1, 3))[:, :2].tolist())  # 6.1 km before
    spline, freedom = optimised(waypoints, minimum_jerk_spline(waypoints),
                                config.limits.max_curvature)
    kept = np.flatnonzero(~freedom.skipped)
    assert (check_segments(spline).max_speed[kept] <= MAX_SPEED).all()
