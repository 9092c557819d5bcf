"""Checks on received messages shared by the nodes: frame names, static transforms, finite poses.

:class:`MapPoses` turns a received pose into a planar pose in the node's map frame: a pose in
that frame (or with an empty frame) as it is, a pose in a frame joined to it by static transforms
(RViz's fixed frame ``map`` for a robot in ``robot1/map``) transformed, anything else dropped.
A dropped message gives a warning throttled to one per :data:`WARN_PERIOD_S` per call site, so a
stream of bad messages cannot flood the log.
"""

from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import Pose
from rclpy.node import Node

from wheelsim.core.geometry.se2 import Floats3, Pose2D, compose_floats
from wheelsim.ros.conversions import pose2d
from wheelsim.ros.static_frames import StaticFrames

WARN_PERIOD_S = 5.0  # throttle of warnings that can repeat with every message


def frame_matches(node: Node, frame_id: str, expected: str, what: str) -> bool:
    """Whether ``frame_id`` is ``expected`` (or empty); warns (throttled) when it is not."""
    frame = frame_id.lstrip('/')
    if frame in ('', expected):
        return True
    node.get_logger().warning(
        f'{what} ignored: its frame is "{frame}", {node.get_name()} works in "{expected}" '
        '(no static transform joins them)',
        throttle_duration_sec=WARN_PERIOD_S,
    )
    return False


class MapPoses:
    """Received poses as planar poses in ``map_frame`` (see the module doc)."""

    def __init__(self, node: Node, map_frame: str) -> None:
        self._node = node
        self.map_frame = map_frame
        self._static = StaticFrames(node)

    def map_T(self, frame_id: str, what: str) -> Floats3 | None:
        """The planar transform from ``frame_id`` into the map frame; None (and a throttled
        warning) when no static transform joins them."""
        frame = frame_id.lstrip('/')
        if frame in ('', self.map_frame):
            return (0.0, 0.0, 0.0)
        transform = self._static.target_T_source(self.map_frame, frame)
        if transform is None:
            frame_matches(self._node, frame, self.map_frame, what)
        return transform

    def pose(self, pose: Pose, frame_id: str, what: str) -> Pose2D | None:
        """``pose`` (in ``frame_id``) in the map frame if finite and transformable, else None."""
        planar = pose2d(pose)
        if not all(math.isfinite(v) for v in planar):
            self._node.get_logger().warning(
                f'{what} ignored: not finite {tuple(planar)}', throttle_duration_sec=WARN_PERIOD_S
            )
            return None
        transform = self.map_T(frame_id, what)
        if transform is None:
            return None
        return Pose2D(*compose_floats(transform, planar))


def rotate_planar_covariance(covariance: np.ndarray, yaw_rad: float) -> np.ndarray:
    """A 3x3 (x, y, yaw) covariance seen from a frame rotated by ``yaw_rad``: R C R^T."""
    cos, sin = math.cos(yaw_rad), math.sin(yaw_rad)
    rotation = np.array([[cos, -sin, 0.0], [sin, cos, 0.0], [0.0, 0.0, 1.0]])
    return rotation @ covariance @ rotation.T
