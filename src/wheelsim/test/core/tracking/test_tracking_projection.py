"""The compiled path projection gives, bit for bit, what the numpy formulation it replaced gave:
random polylines with zero-length segments, held parts with extended ends, points anywhere."""

import bisect
import math
import struct

import numpy as np
import pytest

from wheelsim.core.compiled import plain_function
from wheelsim.core.planning.trajectory import Trajectory, TrajectoryPoint
from wheelsim.core.tracking.projection import nearest_around, nearest_on_segments
from wheelsim.core.tracking.reference import SEARCH_AHEAD_M, SEARCH_BEHIND_M, PathProgress


def bits(values) -> bytes:
    """The values' bits, any NaN as one NaN (numpy and the kernel may carry different NaNs)."""
    return struct.pack(f'<{len(values)}d', *(math.nan if v != v else v for v in values))


def numpy_projection(trajectory: Trajectory, x_m: float, y_m: float, first: int, last: int,
                     held_first: int, held_last: int) -> tuple[float, ...]:
    """The nearest point on segments ``first`` .. ``last - 1`` as the numpy formulation found it
    (PathProgress._project before the compiled kernel), with both headings there."""
    x, y = trajectory.x_m, trajectory.y_m
    dx_all, dy_all = np.diff(x), np.diff(y)
    length_sq = dx_all * dx_all + dy_all * dy_all
    length_sq = np.where(length_sq > 0.0, length_sq, np.inf)
    min_fraction, max_fraction = np.zeros(len(dx_all)), np.ones(len(dx_all))
    min_fraction[held_first], max_fraction[held_last] = -np.inf, np.inf
    segments = slice(first, last)
    start_x, start_y = x[:-1][segments], y[:-1][segments]
    dx, dy = dx_all[segments], dy_all[segments]
    fraction = ((x_m - start_x) * dx + (y_m - start_y) * dy) / length_sq[segments]
    fraction = np.minimum(np.maximum(fraction, min_fraction[segments]), max_fraction[segments])
    px, py = start_x + fraction * dx, start_y + fraction * dy
    k = int(np.argmin((px - x_m) ** 2 + (py - y_m) ** 2))
    arc_lengths = trajectory.s_m.tolist()
    s_before, s_after = arc_lengths[first + k], arc_lengths[first + k + 1]
    s = s_before + float(fraction[k]) * (s_after - s_before)
    nearest_x, nearest_y = float(px[k]), float(py[k])
    path_yaw = trajectory.value_at_arc_length(s, 'path_yaw_rad')
    offset = -math.sin(path_yaw) * (x_m - nearest_x) + math.cos(path_yaw) * (y_m - nearest_y)
    return (s, nearest_x, nearest_y, trajectory.value_at_arc_length(s, 'yaw_rad'), path_yaw,
            offset)


def numpy_window(trajectory: Trajectory, around_s_m: float, held_first: int,
                 held_last: int) -> tuple[int, int]:
    """The segments PathProgress._near searched before the compiled kernel."""
    arc_lengths = trajectory.s_m.tolist()
    end = held_last + 1
    first = bisect.bisect_left(arc_lengths, around_s_m - SEARCH_BEHIND_M) - 1
    first = min(max(first, held_first), end - 1)
    last = bisect.bisect_left(arc_lengths, around_s_m + SEARCH_AHEAD_M) + 1
    return first, min(max(last, first + 1), end)


def random_trajectory(rng: np.random.Generator, count: int) -> Trajectory:
    """A random walk of ``count`` samples, some repeated (zero-length segments, at the ends
    too), with random headings."""
    steps = rng.normal(0.0, 0.3, (count - 1, 2))
    steps[rng.random(count - 1) < 0.15] = 0.0
    points = np.vstack([rng.normal(0.0, 3.0, 2), steps]).cumsum(axis=0)
    x, y = points[:, 0], points[:, 1]
    fields = {name: rng.normal(0.0, 2.0, count) for name in TrajectoryPoint._fields}
    fields.update(t_s=np.arange(count) * 0.1, x_m=x, y_m=y,
                  s_m=np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))]))
    return Trajectory(**fields)


def query_points(rng: np.random.Generator, trajectory: Trajectory) -> list[tuple[float, float]]:
    """Points near and far, on the samples themselves, signed zeros, not finite."""
    near = rng.normal(0.0, 1.0, (20, 2)) + np.column_stack(
        [trajectory.x_m, trajectory.y_m])[rng.integers(0, len(trajectory), 20)]
    far = rng.normal(0.0, 50.0, (5, 2))
    on_samples = [(float(x), float(y)) for x, y in zip(trajectory.x_m[:3], trajectory.y_m[:3],
                                                       strict=True)]
    return [*map(tuple, near.tolist()), *map(tuple, far.tolist()), *on_samples,
            (0.0, 0.0), (-0.0, -0.0), (math.nan, 1.0), (1.0, math.inf)]


@pytest.mark.filterwarnings('ignore:invalid value')  # the NaN and infinite points
@pytest.mark.parametrize('seed', range(40))
def test_projection_is_the_numpy_formulation_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(2, 40))
    trajectory = random_trajectory(rng, count)
    table = trajectory.table
    segments = count - 1
    for x_m, y_m in query_points(rng, trajectory):
        held_first = int(rng.integers(0, segments))
        held_last = int(rng.integers(held_first, segments))
        first = int(rng.integers(held_first, held_last + 1))
        last = int(rng.integers(first + 1, held_last + 2))
        for held in ((0, segments - 1), (held_first, held_last)):
            for window in ((held[0], held[1] + 1), (first, last) if held[0] == held_first else
                           (held[0], held[1] + 1)):
                expected = numpy_projection(trajectory, x_m, y_m, *window, *held)
                found = nearest_on_segments(table, x_m, y_m, *window, *held)
                assert bits(found) == bits(expected), (seed, x_m, y_m, window, held)
                plain = plain_function(nearest_on_segments)(table, x_m, y_m, *window, *held)
                assert bits(plain) == bits(expected)
        around_s_m = float(rng.uniform(-1.0, trajectory.length_m + 1.0))
        window = numpy_window(trajectory, around_s_m, held_first, held_last)
        expected = numpy_projection(trajectory, x_m, y_m, *window, held_first, held_last)
        found = nearest_around(table, x_m, y_m, around_s_m, SEARCH_BEHIND_M, SEARCH_AHEAD_M,
                               held_first, held_last)
        assert bits(found) == bits(expected), (seed, x_m, y_m, around_s_m)
        assert bits(plain_function(nearest_around)(table, x_m, y_m, around_s_m, SEARCH_BEHIND_M,
                                           SEARCH_AHEAD_M, held_first, held_last)) == bits(expected)


def polyline(x_m: list[float], y_m: list[float]) -> Trajectory:
    """A trajectory through the points, headings 0."""
    x, y = np.array(x_m), np.array(y_m)
    fields = {name: np.zeros(len(x)) for name in TrajectoryPoint._fields}
    fields.update(t_s=np.arange(len(x), dtype=float), x_m=x, y_m=y,
                  s_m=np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))]))
    return Trajectory(**fields)


def test_a_point_projects_onto_the_extended_ends_and_past_zero_length_segments():
    # A corner walked with repeated samples (zero-length segments at both ends).
    trajectory = polyline([0.0, 0.0, 2.0, 2.0, 2.0], [0.0, 0.0, 0.0, 2.0, 2.0])
    progress = PathProgress(trajectory)
    assert progress.nearest(-1.0, 0.5)[:3] == (0.0, 0.0, 0.0)  # no extension of zero length
    assert progress.nearest(1.0, -0.5)[:3] == (1.0, 1.0, 0.0)
    assert progress.nearest(2.5, 1.5)[:3] == (3.5, 2.0, 1.5)
    assert progress.nearest(3.0, 5.0)[:3] == (4.0, 2.0, 2.0)
    progress.hold_to(1, 3)  # (0,0) .. (2,2) without the repeated ends: extended both ways
    assert progress.nearest(-1.0, -0.2)[:3] == (-1.0, -1.0, 0.0)
    assert progress.nearest(2.3, 3.0)[:3] == (5.0, 2.0, 3.0)
    behind = PathProgress(polyline([0.0, 3.0], [0.0, 0.0])).nearest(-2.0, 1.0)
    assert (behind.s_m, behind.x_m, behind.offset_m) == (-2.0, -2.0, 1.0)
    past = PathProgress(polyline([0.0, 3.0], [0.0, 0.0])).nearest(5.0, -1.5)
    assert (past.s_m, past.x_m, past.offset_m) == pytest.approx((5.0, 5.0, -1.5))


def test_equally_near_segments_give_the_first_and_windows_end_as_bisect_left():
    # A U: (1, 1) is 1 m from three segments; the first one wins, searched whole or from s = 0.
    u_turn = polyline([0.0, 2.0, 2.0, 0.0], [0.0, 0.0, 2.0, 2.0])
    assert PathProgress(u_turn).nearest(1.0, 1.0)[:3] == (1.0, 1.0, 0.0)
    assert nearest_around(u_turn.table, 1.0, 1.0, 0.0, SEARCH_BEHIND_M, SEARCH_AHEAD_M, 0,
                          2)[:3] == (1.0, 1.0, 0.0)
    # Whole-metre samples: the window's ends fall on samples, where bisect_left and
    # bisect_right differ (around 4 m: from the segment 2 .. 3 m on, not 3 .. 4 m).
    line = polyline([float(k) for k in range(11)], [0.0] * 11)
    for around_s_m in np.arange(0.0, 11.0):
        for x_m in np.arange(-1.5, 11.0, 0.5):
            window = numpy_window(line, around_s_m, 0, 9)
            expected = numpy_projection(line, x_m, 0.3, *window, 0, 9)
            found = nearest_around(line.table, x_m, 0.3, around_s_m, SEARCH_BEHIND_M,
                                   SEARCH_AHEAD_M, 0, 9)
            assert bits(found) == bits(expected), (around_s_m, x_m)
    assert nearest_around(line.table, 2.5, 0.3, 4.0, SEARCH_BEHIND_M, SEARCH_AHEAD_M, 0,
                          9)[0] == 2.5


@pytest.mark.filterwarnings('ignore:overflow')  # slopes over subnormal arc lengths
@pytest.mark.parametrize('seed', range(20))
def test_signed_zeros_and_tiny_values_come_out_as_numpy_gives_them(seed):
    """numpy.maximum and minimum of equal values give the second one: -0.0 and 0.0 bounds."""
    rng = np.random.default_rng(seed)
    values = np.array([0.0, -0.0, 5e-324, -5e-324, 1.0, -1.0, 2.0])
    count = int(rng.integers(2, 6))
    x, y = rng.choice(values, count), rng.choice(values, count)
    trajectory = polyline(x.tolist(), y.tolist())
    for x_m, y_m in rng.choice(values, (12, 2)).tolist():
        held_first = int(rng.integers(0, count - 1))
        held_last = int(rng.integers(held_first, count - 1))
        for first in range(held_first, held_last + 1):
            for last in range(first + 1, held_last + 2):
                expected = numpy_projection(trajectory, x_m, y_m, first, last, held_first,
                                            held_last)
                found = nearest_on_segments(trajectory.table, x_m, y_m, first, last, held_first,
                                            held_last)
                assert bits(found) == bits(expected), (x.tolist(), y.tolist(), x_m, y_m, first,
                                                       last, held_first, held_last)
