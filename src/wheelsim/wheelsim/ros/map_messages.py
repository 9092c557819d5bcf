"""``nav_msgs/OccupancyGrid`` <-> the core's occupancy map, and the world's small messages.

Pure functions over message objects (no ``rclpy.init()`` needed). The grid's origin pose is taken
as planar (x, y and the yaw of its orientation), as map_server writes it.
"""

from __future__ import annotations

import math
from array import array

import numpy as np
from geometry_msgs.msg import Point32, PointStamped, PolygonStamped
from nav_msgs.msg import OccupancyGrid
from sensor_msgs.msg import LaserScan

from wheelsim.core.geometry.se2 import compose_floats
from wheelsim.core.world.config import ScanSettings
from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.occupancy import OccupancyMap
from wheelsim.ros.conversions import fill_pose, pose2d, time_msg


def occupancy_map(msg: OccupancyGrid, occupied_threshold: int,
                  map_T_frame: tuple[float, float, float] | None = None) -> OccupancyMap:
    """The core map of a grid message, its origin moved by ``map_T_frame`` (if given: the
    planar transform from the message's frame into the receiver's map frame). Raises MapError
    on a bad grid, naming a non-finite origin as the message gives it."""
    info = msg.info
    origin = pose2d(info.origin)
    if map_T_frame is not None and all(map(math.isfinite, origin)):
        origin = compose_floats(map_T_frame, origin)
    data = np.asarray(msg.data, dtype=np.int8)
    return OccupancyMap.from_values(data, int(info.width), int(info.height),
                                    float(info.resolution), origin, occupied_threshold)


def occupancy_grid(world: OccupancyMap, frame_id: str, stamp_ns: int) -> OccupancyGrid:
    """The grid message map_server would publish for ``world`` (its cell values)."""
    msg = OccupancyGrid()
    msg.header.frame_id = frame_id
    time_msg(stamp_ns, msg.header.stamp)
    msg.info.map_load_time = time_msg(stamp_ns)
    msg.info.resolution = world.resolution_m
    msg.info.width, msg.info.height = world.width, world.height
    fill_pose(msg.info.origin, world.origin)
    msg.data = array('b', world.values.tobytes())
    return msg


def laser_scan(settings: ScanSettings, frame_id: str, stamp_ns: int,
               ranges: np.ndarray) -> LaserScan:
    """A LaserScan of one instant (``time_increment`` 0): every beam cast from one pose."""
    msg = LaserScan()
    msg.header.frame_id = frame_id
    time_msg(stamp_ns, msg.header.stamp)
    msg.angle_min = settings.angle_min
    msg.angle_max = settings.last_angle
    msg.angle_increment = settings.angle_increment
    msg.time_increment = 0.0
    msg.scan_time = 1.0 / settings.rate
    msg.range_min = settings.range_min
    msg.range_max = settings.range_max
    msg.ranges = array('f', np.asarray(ranges, dtype=np.float32).tobytes())
    return msg


def footprint_polygon(footprint: Footprint, frame_id: str, stamp_ns: int) -> PolygonStamped:
    """The footprint's corners in the base frame."""
    msg = PolygonStamped()
    msg.header.frame_id = frame_id
    time_msg(stamp_ns, msg.header.stamp)
    msg.polygon.points = [Point32(x=float(x), y=float(y), z=0.0) for x, y in footprint.corners]
    return msg


def point_stamped(x_m: float, y_m: float, frame_id: str, stamp_ns: int) -> PointStamped:
    msg = PointStamped()
    msg.header.frame_id = frame_id
    time_msg(stamp_ns, msg.header.stamp)
    msg.point.x, msg.point.y = float(x_m), float(y_m)
    return msg
