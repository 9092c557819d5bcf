"""Checks on received messages shared by the nodes: frame names and finite poses.

A message that fails a check is dropped with a warning throttled to one per
:data:`WARN_PERIOD_S` per call site, so a stream of bad messages cannot flood the log.
"""

from __future__ import annotations

import math

from geometry_msgs.msg import PoseWithCovarianceStamped
from rclpy.node import Node

from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.ros.conversions import pose2d

WARN_PERIOD_S = 5.0  # throttle of warnings that can repeat with every message


def frame_matches(node: Node, frame_id: str, expected: str, what: str) -> bool:
    """Whether ``frame_id`` is ``expected`` (or empty); warns (throttled) when it is not."""
    frame = frame_id.lstrip('/')
    if frame in ('', expected):
        return True
    node.get_logger().warning(
        f'{what} ignored: its frame is "{frame}", {node.get_name()} works in "{expected}" '
        '(no transform is applied)',
        throttle_duration_sec=WARN_PERIOD_S,
    )
    return False


def map_pose(node: Node, msg: PoseWithCovarianceStamped, map_frame: str) -> Pose2D | None:
    """The planar pose of ``msg`` if it is finite and in ``map_frame``; None (and a throttled
    warning) otherwise."""
    if not frame_matches(node, msg.header.frame_id, map_frame, 'pose'):
        return None
    pose = Pose2D(*pose2d(msg.pose.pose))
    if not all(math.isfinite(v) for v in pose):
        node.get_logger().warning(
            f'pose ignored: not finite {tuple(pose)}', throttle_duration_sec=WARN_PERIOD_S
        )
        return None
    return pose
