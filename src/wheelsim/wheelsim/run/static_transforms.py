"""The fixed joints of ``robot_description`` on ``/tf_static``, in a headless run.

Live, the launch files run robot_state_publisher, which publishes every fixed joint of the URDF
vehicle_sim gives it (the laser, the REP-120 footprint frame) on ``/tf_static``. A headless run
has no robot_state_publisher: :class:`StaticTransforms` takes its place for the fixed joints,
so that the run's bag holds them and a bag viewer (Foxglove, ``ros2 bag play`` with RViz) can
place the scan. Like robot_state_publisher it publishes them again whenever
``robot_description`` changes, stamped with the time it heard it, transient local, depth 1 (as
tf2's static broadcaster). The wheels and steering joints move: robot_state_publisher puts
them on ``/tf`` from ``joint_states``, which the bag holds.
"""

from __future__ import annotations

from geometry_msgs.msg import TransformStamped
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from urdf_parser_py.urdf import URDF

from wheelsim.ros import qos
from wheelsim.ros.conversions import quaternion_from_rpy, time_msg
from wheelsim.ros.seam import NodeSeam


class StaticTransforms:
    """A lock-step node publishing the fixed joints of each ``robot_description`` it hears on
    ``/tf_static`` (see the module documentation)."""

    name = 'robot_state_publisher'

    def __init__(self, seam: NodeSeam) -> None:
        self.seam = seam
        self._publisher = seam.create_publisher(TFMessage, '/tf_static', qos.LATCHED)
        seam.create_subscription(String, 'robot_description', self._on_description,
                                 qos.LATCHED)

    def _on_description(self, msg: String) -> None:
        stamp = time_msg(self.seam.now_ns())
        transforms = []
        for joint in URDF.from_xml_string(msg.data).joints:
            if joint.type != 'fixed':
                continue
            transform = TransformStamped(child_frame_id=joint.child)
            transform.header.stamp, transform.header.frame_id = stamp, joint.parent
            if joint.origin is not None:  # URDF: none is the identity
                translation = transform.transform.translation
                translation.x, translation.y, translation.z = joint.origin.xyz
                transform.transform.rotation = quaternion_from_rpy(*joint.origin.rpy)
            transforms.append(transform)
        self._publisher.publish(TFMessage(transforms=transforms))
