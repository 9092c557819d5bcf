"""The occupancy map: OccupancyGrid layout, frames, obstacles, the clearance lower bound."""

import math

import numpy as np
import pytest

from wheelsim.core.world.occupancy import MapError, OccupancyMap


def test_row_major_data_with_row_0_at_the_origin():
    world = OccupancyMap.from_values([0, 100, -1, 0, 0, 100], 3, 2, 0.5, (1.0, 2.0, 0.0))
    assert world.obstacles.tolist() == [[False, True, False], [False, False, True]]
    assert world.is_obstacle(1.0 + 0.75, 2.0 + 0.25)  # row 0, col 1
    assert world.is_obstacle(1.0 + 1.25, 2.0 + 0.75)  # row 1, col 2
    assert not world.is_obstacle(1.0 + 1.25, 2.0 + 0.25)
    assert not world.is_obstacle(-5.0, 0.0)  # outside: free


def test_grid_and_map_frames_are_inverse_with_a_rotated_origin():
    world = OccupancyMap.from_values(np.zeros(12), 4, 3, 0.25, (1.0, -2.0, 0.7))
    col, row = world.to_grid([0.3, -4.0], [1.1, 2.5])
    x, y = world.to_map(col, row)
    np.testing.assert_allclose([x, y], [[0.3, -4.0], [1.1, 2.5]])
    # grid x axis is the map direction 0.7 rad
    x1, y1 = world.to_map(4.0, 0.0)
    assert (x1, y1) == pytest.approx((1.0 + math.cos(0.7), -2.0 + math.sin(0.7)))


def test_clearance_lower_bound_never_exceeds_the_true_distance():
    rng = np.random.default_rng(1)
    values = np.zeros((60, 80), np.int8)
    values[rng.integers(0, 60, 40), rng.integers(0, 80, 40)] = 100
    world = OccupancyMap.from_values(values, 80, 60, 0.1, (-3.0, -2.0, 0.4))
    rows, cols = np.nonzero(world.obstacles)
    for x, y in rng.uniform(-6.0, 6.0, size=(300, 2)):
        col, row = world.to_grid(x, y)
        # exact distance from the point to each obstacle square, in cells
        dx = np.maximum(np.maximum(cols - col, col - cols - 1), 0.0)
        dy = np.maximum(np.maximum(rows - row, row - rows - 1), 0.0)
        exact_m = np.hypot(dx, dy).min() * 0.1
        bound = world.clearance_lower_bound(x, y)
        assert bound <= exact_m + 1e-12
        if 0 <= col < 80 and 0 <= row < 60:  # inside, not far below: by a cell diagonal
            assert bound >= exact_m - 2 * math.sqrt(2) * 0.1 - 1e-12


def test_no_obstacles_means_infinite_clearance():
    world = OccupancyMap.from_values(np.zeros(4), 2, 2, 0.1)
    assert world.clearance_lower_bound(0.0, 0.0) == math.inf
    assert np.isinf(world.obstacle_distance_m).all()


def test_threshold_decides_what_is_an_obstacle():
    data = [0, 64, 65, 99, 100, -1]
    assert OccupancyMap.from_values(data, 6, 1, 1.0).obstacles.tolist() == [
        [False, False, False, False, True, False]]
    assert OccupancyMap.from_values(data, 6, 1, 1.0, occupied_threshold=65).obstacles.tolist() == [
        [False, False, True, True, True, False]]


@pytest.mark.parametrize('args, message', [
    (([0] * 5, 2, 2, 0.1), 'map data has 5 cells, width x height is 2 x 2 = 4'),
    (([0] * 4, 2, 2, 0.0), 'resolution 0.0 m: must be a finite number >= 1e-06'),
    (([0] * 4, 2, 2, 0.1, (0.0, float('nan'), 0.0)), 'origin'),
    (([0] * 4, 2, 2, 0.1, (-1e308, 0.0, 0.0)), r'within \+-1e\+09 m of the map frame'),
    (([0] * 4, 2, 2, 1e300), r'2 x 2 cells of 1e\+300 m: the grid must lie within'),
    (([0] * 4, 2, 2, 0.1, (1e9 - 0.1, 0.0, 0.0)), 'must lie within'),  # the far corner
    (([], 0, 2, 0.1), 'map size 0 x 2 cells'),
])
def test_bad_maps_are_refused_with_the_reason(args, message):
    with pytest.raises(MapError, match=message):
        OccupancyMap.from_values(*args)


def test_a_grid_up_to_the_coordinate_bound_is_taken():
    grid = OccupancyMap.from_values([0] * 4, 2, 2, 0.5, (1e9 - 1.0, -1e9, math.pi / 2))
    assert grid.to_map(2, 0) == pytest.approx((1e9 - 1.0, -1e9 + 1.0))
