"""wheelsim.ros.map_messages: a grid message to the core's map, its origin moved into the map
frame, a bad origin named as the message gives it."""

import math

import pytest
from nav_msgs.msg import OccupancyGrid

from wheelsim.core.world.occupancy import MapError
from wheelsim.ros.map_messages import occupancy_map


def grid(x_m: float, y_m: float) -> OccupancyGrid:
    msg = OccupancyGrid()
    msg.info.resolution, msg.info.width, msg.info.height = 0.5, 2, 2
    msg.info.origin.position.x, msg.info.origin.position.y = x_m, y_m
    msg.info.origin.orientation.w = 1.0
    msg.data = [0, 100, 0, 0]
    return msg


def test_the_origin_is_moved_into_the_map_frame():
    world = occupancy_map(grid(1.0, 2.0), 65, (10.0, 0.0, math.pi / 2))
    assert world.origin == pytest.approx((8.0, 1.0, math.pi / 2))
    assert occupancy_map(grid(1.0, 2.0), 65).origin == (1.0, 2.0, 0.0)


def test_a_non_finite_origin_is_named_as_given():
    """Found in review: an origin x of NaN was named '(nan, nan, 0.0)': moved into the map
    frame first, the NaN spread to y."""
    with pytest.raises(MapError, match=r'^map origin \(nan, 0\.0, 0\.0\): must be three finite '):
        occupancy_map(grid(math.nan, 0.0), 65, (0.0, 0.0, 0.0))
