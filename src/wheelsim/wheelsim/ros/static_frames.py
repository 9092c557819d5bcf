"""Planar poses moved between frames joined by static transforms (``/tf_static``), without tf2.

RViz stamps its "2D Goal Pose" and "2D Pose Estimate" with its fixed frame (``map``), while a
robot with a frame prefix works in ``robot1/map``; multi_robot.launch.py joins the two with a
static transform. :class:`StaticFrames` keeps every static transform it hears (transient local,
as tf2's static listener subscribes) and expresses a planar pose given in one frame in another
when both hang in the same tree of static transforms. Transforms are taken as planar: x, y and
the yaw of the rotation; a transform that tilts the plane is refused. Dynamic ``/tf`` is not
used (tf2_ros has no PyPI package; a goal in ``odom`` is still refused with a warning).
"""

from __future__ import annotations

import math

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from wheelsim.core.geometry.se2 import Floats3, compose_floats, inverse_floats
from wheelsim.ros.conversions import yaw_from_quaternion
from wheelsim.ros.seam import NodeSeam

#: As tf2_ros' static listener: every static transform published so far, also to late joiners.
STATIC_TF_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                           reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)
PLANAR_TOLERANCE = 1e-6  # |z axis tilt| (quaternion x, y) and |z| [m] accepted as planar


class StaticFrames:
    """The planar static transform tree heard on ``/tf_static`` (remaps apply)."""

    def __init__(self, seam: NodeSeam) -> None:
        self._parent: dict[str, tuple[str, Floats3]] = {}  # child -> (parent, parent_T_child)
        #: child frame -> why its latest static transform was refused (until one is taken)
        self.refused: dict[str, str] = {}
        seam.create_subscription(TFMessage, '/tf_static', self._on_static, STATIC_TF_QOS)

    def _on_static(self, msg: TFMessage) -> None:
        for transform in msg.transforms:
            rotation, translation = transform.transform.rotation, transform.transform.translation
            planar = (abs(rotation.x) < PLANAR_TOLERANCE and abs(rotation.y) < PLANAR_TOLERANCE
                      and abs(translation.z) < PLANAR_TOLERANCE)
            values = (translation.x, translation.y, yaw_from_quaternion(rotation))
            parent = transform.header.frame_id.lstrip('/')
            child = transform.child_frame_id.lstrip('/')
            if not all(math.isfinite(v) for v in values):
                self.refused[child] = f'its transform from "{parent}" is not finite'
            elif not planar:
                self.refused[child] = f'its transform from "{parent}" tilts the plane'
            else:
                self._parent[child] = (parent, values)
                self.refused.pop(child, None)

    def _to_root(self, frame: str) -> tuple[str, Floats3]:
        """(root of ``frame``'s tree, root_T_frame)."""
        pose: Floats3 = (0.0, 0.0, 0.0)
        seen = {frame}
        while frame in self._parent:
            frame, parent_T_frame = self._parent[frame]
            if frame in seen:  # a loop of static transforms: no usable tree
                break
            seen.add(frame)
            pose = compose_floats(parent_T_frame, pose)
        return frame, pose

    def target_T_source(self, target: str, source: str) -> Floats3 | None:
        """The planar transform taking poses in ``source`` into ``target``; None if the two
        frames are not joined by static transforms."""
        if source == target:
            return (0.0, 0.0, 0.0)
        source_root, root_T_source = self._to_root(source)
        target_root, root_T_target = self._to_root(target)
        if source_root != target_root:
            return None
        return compose_floats(inverse_floats(root_T_target), root_T_source)
