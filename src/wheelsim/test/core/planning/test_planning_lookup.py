"""Compiled lookups in a trajectory's samples: np.interp's values bit for bit, the same in plain
Python, and the last sample where the arc length stands still."""

import math
import struct

import numpy as np
import pytest

from wheelsim.core.compiled import plain_function
from wheelsim.core.planning.lookup import (
    ARC_LENGTH,
    FIELD_COUNT,
    TIME,
    compiled_value_at,
    point_at,
)
from wheelsim.core.planning.trajectory import Trajectory, TrajectoryPoint


def bits(values) -> bytes:
    return struct.pack(f'<{len(values)}d', *values)


def test_the_table_columns_are_the_trajectory_fields():
    assert (TIME, ARC_LENGTH) == (TrajectoryPoint._fields.index('t_s'),
                                  TrajectoryPoint._fields.index('s_m'))
    assert FIELD_COUNT == len(TrajectoryPoint._fields)


def random_trajectory(rng: np.random.Generator, count: int) -> Trajectory:
    """Random fields (signed zeros among them); the arc length stands still now and then."""
    fields = {name: rng.normal(0.0, 2.0, count) for name in TrajectoryPoint._fields}
    fields['v_mps'][rng.random(count) < 0.2] = -0.0
    steps = rng.uniform(0.0, 0.5, count - 1)
    steps[rng.random(count - 1) < 0.2] = 0.0
    fields.update(t_s=np.concatenate([[0.0], np.cumsum(rng.uniform(0.01, 0.5, count - 1))]),
                  s_m=np.concatenate([[0.0], np.cumsum(steps)]))
    return Trajectory(**fields)


def lookup_values(rng: np.random.Generator, axis_values: np.ndarray) -> list[float]:
    """At and between the samples, before and after the ends, NaN."""
    inside = rng.uniform(axis_values[0], axis_values[-1], 10)
    return [*axis_values.tolist(), *inside.tolist(), -1.0, -0.0, 1e9, math.nan,
            float(axis_values[-1]) + 1e-9]


@pytest.mark.filterwarnings('ignore:invalid value')  # NaN looked up in plain Python
@pytest.mark.parametrize('seed', range(20))
def test_compiled_lookups_are_the_plain_python_ones_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    trajectory = random_trajectory(rng, int(rng.integers(2, 30)))
    table = trajectory.table
    for axis, axis_values in ((TIME, trajectory.t_s), (ARC_LENGTH, trajectory.s_m)):
        for value in lookup_values(rng, axis_values):
            point = point_at(table, axis, value)
            assert bits(point) == bits(plain_function(point_at)(table, axis, value)), (axis, value)
            for field in range(len(TrajectoryPoint._fields)):
                one = compiled_value_at(table, axis, value, field)
                assert bits((one,)) == bits((point[field],))
                assert bits((one,)) == bits((plain_function(compiled_value_at)(table, axis, value,
                                                                        field),))


@pytest.mark.parametrize('seed', range(20))
def test_a_lookup_in_time_is_np_interp_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    trajectory = random_trajectory(rng, int(rng.integers(2, 30)))
    times = [v for v in lookup_values(rng, trajectory.t_s) if not math.isnan(v)]
    for t_s in times:
        point = trajectory.at_time(t_s)
        clamped = min(max(t_s, 0.0), trajectory.duration_s)
        expected = [float(np.interp(clamped, trajectory.t_s, getattr(trajectory, name)))
                    for name in TrajectoryPoint._fields]
        assert bits(point) == bits(expected), t_s


def test_where_the_arc_length_stands_still_the_last_sample_counts():
    trajectory = random_trajectory(np.random.default_rng(0), 4)
    trajectory = Trajectory(**{**{name: getattr(trajectory, name) for name in
                                  TrajectoryPoint._fields},
                               's_m': np.array([0.0, 1.0, 1.0, 2.0]),
                               'x_m': np.array([0.0, 1.0, 5.0, 6.0])})
    assert trajectory.at_arc_length(1.0).x_m == 5.0
    assert trajectory.value_at_arc_length(1.0, 'x_m') == 5.0
    assert trajectory.value_at_arc_length(0.5, 'x_m') == 0.5
    assert trajectory.value_at_arc_length(1.5, 'x_m') == 5.5
    assert trajectory.at_arc_length(-3.0) == trajectory.at_arc_length(0.0)
    assert trajectory.at_arc_length(9.0) == trajectory.end()
    assert all(math.isnan(v) for v in trajectory.at_arc_length(math.nan))
