"""The nearest point of a trajectory's path to a point, compiled.

The path is the polyline through the trajectory's samples (the rows of its table,
:mod:`wheelsim.core.planning.lookup`); segment ``k`` joins samples ``k`` and ``k + 1``. A search
covers the segments ``first`` .. ``last - 1`` of the part of the path being driven, the segments
``held_first`` .. ``held_last``; that part's first and last segments extend beyond its ends, so a
vehicle behind its start or past its end gets an arc length below the start's or above the
end's (and its true distance). A segment of zero length projects every point onto its start.
Of equally near points the first segment's wins. Positions in the planning frame (m), arc
lengths in metres, headings in radians.

The arithmetic is that of the numpy formulation it replaces, operation by operation (numpy's
maximum and minimum, the first minimum as numpy.argmin finds it), so results are the same to
the last bit.
"""

from __future__ import annotations

import math

from wheelsim.core.arrays import FloatArray
from wheelsim.core.compiled import compiled, jitable
from wheelsim.core.planning.lookup import ARC_LENGTH, value_at
from wheelsim.core.planning.trajectory import TrajectoryPoint

#: Table columns of the position, heading and direction of travel.
X, Y, YAW, PATH_YAW = (TrajectoryPoint._fields.index(name)
                       for name in ('x_m', 'y_m', 'yaw_rad', 'path_yaw_rad'))


@jitable
def _maximum(a: float, b: float) -> float:
    """numpy.maximum of two floats (NaN propagates; of equal values, ``b``)."""
    return a if a > b or a != a else b


@jitable
def _minimum(a: float, b: float) -> float:
    """numpy.minimum of two floats (NaN propagates; of equal values, ``b``)."""
    return a if a < b or a != a else b


@jitable
def _on_segment(table: FloatArray, k: int, x_m: float, y_m: float, held_first: int,
                held_last: int) -> tuple[float, float, float, float]:
    """The nearest point to (x, y) on segment ``k``: its fraction along the segment (0 start,
    1 end; beyond on the extended ends of the held part), position, and squared distance."""
    start_x, start_y = table[k, X], table[k, Y]
    dx, dy = table[k + 1, X] - start_x, table[k + 1, Y] - start_y
    length_sq = dx * dx + dy * dy
    if not length_sq > 0.0:
        length_sq = math.inf
    fraction = ((x_m - start_x) * dx + (y_m - start_y) * dy) / length_sq
    fraction = _minimum(_maximum(fraction, -math.inf if k == held_first else 0.0),
                        math.inf if k == held_last else 1.0)
    px, py = start_x + fraction * dx, start_y + fraction * dy
    gap_x, gap_y = px - x_m, py - y_m
    return fraction, px, py, gap_x * gap_x + gap_y * gap_y


@jitable
def _bisect_left(table: FloatArray, column: int, value: float) -> int:
    """Python's bisect_left in the sorted column ``column``."""
    low, high = 0, len(table)
    while low < high:
        middle = (low + high) // 2
        if table[middle, column] < value:
            low = middle + 1
        else:
            high = middle
    return low


@compiled
def nearest_on_segments(table: FloatArray, x_m: float, y_m: float, first: int, last: int,
                        held_first: int, held_last: int
                        ) -> tuple[float, float, float, float, float, float]:
    """The nearest point to (x, y) on the segments ``first`` .. ``last - 1`` (see the module
    doc): its arc length, position, the trajectory's ``yaw_rad`` and ``path_yaw_rad`` there,
    and the point's signed lateral offset from it (left positive)."""
    best = first
    fraction, px, py, best_distance_sq = _on_segment(table, first, x_m, y_m, held_first,
                                                     held_last)
    if best_distance_sq == best_distance_sq:  # numpy.argmin: the first NaN, else the first least
        for k in range(first + 1, last):
            k_fraction, k_x, k_y, distance_sq = _on_segment(table, k, x_m, y_m, held_first,
                                                            held_last)
            if distance_sq < best_distance_sq or distance_sq != distance_sq:
                best, fraction, px, py, best_distance_sq = k, k_fraction, k_x, k_y, distance_sq
                if distance_sq != distance_sq:
                    break
    s_before, s_after = table[best, ARC_LENGTH], table[best + 1, ARC_LENGTH]
    s = s_before + fraction * (s_after - s_before)
    path_yaw = value_at(table, ARC_LENGTH, s, PATH_YAW)
    offset = -math.sin(path_yaw) * (x_m - px) + math.cos(path_yaw) * (y_m - py)
    return s, px, py, value_at(table, ARC_LENGTH, s, YAW), path_yaw, offset


@compiled
def nearest_around(table: FloatArray, x_m: float, y_m: float, around_s_m: float,
                   behind_m: float, ahead_m: float, held_first: int, held_last: int
                   ) -> tuple[float, float, float, float, float, float]:
    """:func:`nearest_on_segments` searched on the held segments from ``behind_m`` before the
    arc length ``around_s_m`` to ``ahead_m`` after it (at least one segment)."""
    end = held_last + 1
    first = _bisect_left(table, ARC_LENGTH, around_s_m - behind_m) - 1
    first = min(max(first, held_first), end - 1)
    last = _bisect_left(table, ARC_LENGTH, around_s_m + ahead_m) + 1
    return nearest_on_segments(table, x_m, y_m, first, min(max(last, first + 1), end),
                               held_first, held_last)
