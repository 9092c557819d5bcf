"""Ray casting against walls at known distances and angles: exact for walls along cell edges,
within half a cell diagonal for walls the grid approximates."""

import math

import numpy as np
import pytest

from wheelsim.core.world.occupancy import OccupancyMap
from wheelsim.core.world.raycast import cast_rays

RES = 0.05


def grid_map(obstacle_cells, size=400, origin=(-10.0, -10.0, 0.0), values=None):
    """A size x size map; ``obstacle_cells(rows, cols)`` is True for obstacle cells."""
    rows, cols = np.indices((size, size))
    data = np.zeros((size, size), np.int8) if values is None else values
    data[obstacle_cells(rows, cols)] = 100
    return OccupancyMap.from_values(data, size, size, RES, origin)


@pytest.mark.parametrize('map_yaw', [0.0, 0.3, -2.0, math.pi / 2])
@pytest.mark.parametrize('distance_cells', [7, 40, 113])
def test_wall_along_cell_edges_gives_exact_ranges_at_every_angle(map_yaw, distance_cells):
    """A wall whose face is the grid line col = 200 + distance; the sensor at the grid point
    (200, 200). In the map frame the wall's normal points along the map's yaw, so rays at
    angle t from that normal must read distance / cos(t)."""
    origin_grid = np.array([200.0, 200.0]) * RES
    cos, sin = math.cos(map_yaw), math.sin(map_yaw)
    origin = (-(cos * origin_grid[0] - sin * origin_grid[1]),
              -(sin * origin_grid[0] + cos * origin_grid[1]), map_yaw)
    world = grid_map(lambda r, c: c >= 200 + distance_cells, origin=origin)
    widest = math.atan(190 / distance_cells)  # the hit stays on the 400 x 400 map
    angles = np.linspace(-widest, widest, 33)
    ranges = cast_rays(world, 0.0, 0.0, map_yaw + angles, 100.0)
    expected = distance_cells * RES / np.cos(angles)
    np.testing.assert_allclose(ranges, expected, rtol=0, atol=1e-9)


def test_rays_to_a_corner_and_along_the_other_axes():
    # Walls: col >= 260 (east), row >= 230 (north), col < 150 (west); nothing south.
    world = grid_map(lambda r, c: (c >= 260) | (r >= 230) | (c < 150))
    x0, y0 = 0.0, 0.0  # grid point (200, 200)
    ranges = cast_rays(world, x0, y0, [0.0, math.pi / 2, math.pi, -math.pi / 2,
                                       math.atan2(30, 60)], 50.0)
    # south: the ray leaves the grid at row 0 with nothing: no return
    np.testing.assert_allclose(ranges, [3.0, 1.5, 2.5, math.inf, math.hypot(3.0, 1.5)],
                               atol=1e-9)


def test_diagonal_wall_is_within_half_a_cell_diagonal():
    """A wall along the line x + y = 3 m (45 degrees): a cell is an obstacle when its centre is
    beyond the line. Every hit lies within half a cell diagonal of the true line."""
    def beyond(rows, cols):
        x = (cols + 0.5) * RES - 10.0
        y = (rows + 0.5) * RES - 10.0
        return x + y >= 3.0
    world = grid_map(beyond)
    angles = np.radians(np.linspace(0.0, 90.0, 91))
    ranges = cast_rays(world, 0.2, -0.3, angles, 20.0)
    hit_x = 0.2 + ranges * np.cos(angles)
    hit_y = -0.3 + ranges * np.sin(angles)
    distance_to_line = np.abs(hit_x + hit_y - 3.0) / math.sqrt(2.0)
    assert distance_to_line.max() <= RES * math.sqrt(0.5) + 1e-9
    # and along the normal (45 degrees) the range is the analytic one within half a cell
    normal = cast_rays(world, 0.2, -0.3, [math.pi / 4], 20.0)[0]
    assert normal == pytest.approx((3.0 - 0.2 + 0.3) / math.sqrt(2.0), abs=RES / 2)


def test_range_max_unknown_cells_and_a_sensor_inside_an_obstacle():
    values = np.zeros((400, 400), np.int8)
    values[:, 230:240] = -1  # unknown: transparent
    values[:, 240:250] = 99  # below the default threshold 100: free
    world = grid_map(lambda r, c: c >= 260, values=values)
    assert cast_rays(world, 0.0, 0.0, [0.0], 3.0)[0] == pytest.approx(3.0)
    assert cast_rays(world, 0.0, 0.0, [0.0], 2.99)[0] == math.inf
    assert cast_rays(world, 3.1, 0.0, [0.0, 2.0], 5.0).tolist() == [0.0, 0.0]
    strict = OccupancyMap.from_values(values.copy(), 400, 400, RES, (-10.0, -10.0, 0.0), 99)
    assert cast_rays(strict, 0.0, 0.0, [0.0], 5.0)[0] == pytest.approx(2.0)


def test_a_sensor_outside_the_grid_sees_into_it():
    world = grid_map(lambda r, c: (c >= 100) & (c < 110) & (r >= 190) & (r < 210))
    # The grid spans x in [-10, 10); the block's west face is at x = -5.
    assert cast_rays(world, -12.0, 0.0, [0.0], 20.0)[0] == pytest.approx(7.0)
    assert cast_rays(world, -12.0, 0.0, [math.pi], 20.0)[0] == math.inf
    assert cast_rays(world, -12.0, 30.0, [0.0], 50.0)[0] == math.inf


def test_no_obstacles_no_returns():
    world = grid_map(lambda r, c: np.zeros_like(r, dtype=bool))
    assert np.isinf(cast_rays(world, 0.0, 0.0, np.linspace(-3, 3, 50), 100.0)).all()
