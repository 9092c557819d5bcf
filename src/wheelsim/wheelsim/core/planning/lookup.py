"""A trajectory's samples in one table, and compiled linear interpolation in it.

The table (:func:`sample_table`) has one row per sample: its :data:`FIELD_COUNT` fields (in
:class:`~wheelsim.core.planning.trajectory.TrajectoryPoint` order, so ``t_s`` is column
:data:`TIME` and ``s_m`` column :data:`ARC_LENGTH`), then each field's change per second over the
interval to the next sample, then its change per metre of arc length (the last row's changes
are zero, never read). A lookup at a time or an arc length (``axis`` TIME or ARC_LENGTH) does
np.interp's arithmetic, so the result is the same to the last bit: the sample itself at a sample
(the last one where the axis repeats a value), else ``slope * (value - axis[i]) + field[i]`` on
the interval where ``axis[i] <= value``. The lookups are compiled (:mod:`wheelsim.core.compiled`);
compiled code (the path projection of :mod:`wheelsim.core.tracking.projection`) calls
:func:`value_at` directly.
"""

from __future__ import annotations

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.compiled import compiled, jitable

#: Fields per sample, and the table columns of the two axes.
FIELD_COUNT = 11
TIME, ARC_LENGTH = 0, 1


def sample_table(fields: FloatArray) -> FloatArray:
    """The table of the samples ``fields`` (FIELD_COUNT x N, rows in TrajectoryPoint order),
    as a C-contiguous float64 array (N, 3 FIELD_COUNT). A slope over an interval of zero length
    is infinite or NaN (np.interp's division), which a lookup meets only for a NaN value."""
    columns = np.asarray(fields, dtype=float)
    table = np.zeros((columns.shape[1], 3 * FIELD_COUNT))
    table[:, :FIELD_COUNT] = columns.T
    with np.errstate(divide='ignore', invalid='ignore'):
        for axis in (TIME, ARC_LENGTH):
            first = FIELD_COUNT * (1 + axis)
            table[:-1, first:first + FIELD_COUNT] = (np.diff(columns, axis=1)
                                                    / np.diff(columns[axis])).T
    return table


@jitable
def interval(table: FloatArray, axis: int, value: float) -> tuple[int, bool]:
    """Where ``value`` (within the range of column ``axis``, sorted, or NaN) lies: ``(i, True)``
    at sample ``i`` (the last one where the axis repeats a value), else ``(i, False)`` on the
    interval ``i`` .. ``i + 1`` where ``axis[i] <= value`` (NaN: the last one). The search is
    Python's bisect_right."""
    low, high = 0, len(table)
    while low < high:
        middle = (low + high) // 2
        if value < table[middle, axis]:
            high = middle
        else:
            low = middle + 1
    i = low - 1
    if table[i, axis] == value:
        return i, True
    return min(i, len(table) - 2), False  # NaN compares false: it ends up past the end


@jitable
def value_at(table: FloatArray, axis: int, value: float, field: int) -> float:
    """Field ``field`` where column ``axis`` has ``value``, clamped to the axis range."""
    value = min(max(value, 0.0), table[-1, axis])
    i, at_sample = interval(table, axis, value)
    if at_sample:
        return table[i, field]
    return table[i, FIELD_COUNT * (1 + axis) + field] * (value - table[i, axis]) + table[i, field]


@compiled
def compiled_value_at(table: FloatArray, axis: int, value: float, field: int) -> float:
    """:func:`value_at` for Python callers."""
    return value_at(table, axis, value, field)


@compiled
def point_at(table: FloatArray, axis: int, value: float) -> tuple[float, ...]:
    """Every field (a TrajectoryPoint's values) where column ``axis`` has ``value``, clamped to
    the axis range."""
    value = min(max(value, 0.0), table[-1, axis])
    i, at_sample = interval(table, axis, value)
    a = table[i, :FIELD_COUNT]
    if at_sample:
        return a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]
    k = table[i, FIELD_COUNT * (1 + axis):FIELD_COUNT * (2 + axis)]
    d = value - table[i, axis]
    return (k[0] * d + a[0], k[1] * d + a[1], k[2] * d + a[2], k[3] * d + a[3], k[4] * d + a[4],
            k[5] * d + a[5], k[6] * d + a[6], k[7] * d + a[7], k[8] * d + a[8], k[9] * d + a[9],
            k[10] * d + a[10])
