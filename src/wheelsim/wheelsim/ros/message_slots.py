"""Numbers in and out of messages through the slots behind the generated properties.

rosidl_generator_py gives every field ``f`` of a message class a slot ``_f`` and a property
``f`` over it: the getter returns the slot, the setter stores the value it is given (after type
and range assertions when field checks are on, ``ROS_PYTHON_CHECK_FIELDS=1``). Each property
access is the call of a Python function, about 15 times the cost of the slot access it wraps
(callgrind: about 750 instructions against 50); the localization node moves some forty numbers
per ground-truth sample in and out of messages, which took it more time than everything else
it does. The functions here read and write the slots of the fields they name; they write floats
into float fields and ints into integer fields, what the setters store, so there is nothing
the assertions would find.

The contract is checked on every field used here when this module is imported
(:func:`check_slots`): a generator that stores fields otherwise makes the import fail instead of
the messages go wrong.
"""

from __future__ import annotations

from array import array

from builtin_interfaces.msg import Time
from geometry_msgs.msg import (
    Point,
    Pose,
    PoseWithCovariance,
    PoseWithCovarianceStamped,
    Quaternion,
    Twist,
    TwistStamped,
    TwistWithCovariance,
    Vector3,
)
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import Header

from wheelsim.core.geometry.angles import quaternion_yaw
from wheelsim.core.geometry.se2 import Floats3
from wheelsim.core.units import NS_PER_S

#: The fields read or written through their slots, per message class.
FIELDS = {
    Odometry: ('header', 'pose', 'twist'),
    PoseWithCovarianceStamped: ('header', 'pose'),
    Header: ('stamp', 'frame_id'),
    Time: ('sec', 'nanosec'),
    PoseWithCovariance: ('pose',),
    Pose: ('position', 'orientation'),
    Point: ('x', 'y'),
    Quaternion: ('x', 'y', 'z', 'w'),
    TwistWithCovariance: ('twist',),
    Twist: ('linear', 'angular'),
    Vector3: ('x', 'y', 'z'),
    TwistStamped: ('header', 'twist'),
    JointState: ('header', 'position', 'velocity'),
}


def check_slots() -> None:
    """Raise ImportError unless each field of :data:`FIELDS` is a property that returns its
    slot ``_field`` and stores in it the object it is given (a number sequence: an equal
    ``array('d')``, which the setter makes of what it is given)."""
    for cls, fields in FIELDS.items():
        message = cls()
        for field in fields:
            kind = type(getattr(message, field))
            if kind in FIELDS:
                probe = kind()
            elif kind is array:
                probe = array('d', [7.0])
            else:
                probe = kind(7)  # unlike the field's default
            setattr(message, field, probe)
            stored = getattr(message, '_' + field, None)
            fits = stored is probe or (kind is array and type(stored) is array
                                       and stored.typecode == 'd' and stored == probe)
            if not fits or getattr(message, field) is not stored:
                raise ImportError(f'{cls.__name__}.{field} is not a property over the slot _{field}'
                                  ': wheelsim.ros.message_slots does not fit this rosidl')


def _yaw(q: Quaternion) -> float:
    """:func:`wheelsim.ros.conversions.yaw_from_quaternion` of ``q``."""
    return quaternion_yaw(q._x, q._y, q._z, q._w)


def odometry_sample(msg: Odometry) -> tuple[str, int, Floats3, Floats3]:
    """The header's frame, the stamp [ns], the planar pose ``(x_m, y_m, yaw_rad)`` (as
    :func:`wheelsim.ros.conversions.pose2d`) and the body twist ``(vx_mps, vy_mps, wz_radps)``
    of an ``Odometry``."""
    header = msg._header
    stamp = header._stamp
    pose = msg._pose._pose
    position = pose._position
    return (header._frame_id, stamp._sec * NS_PER_S + stamp._nanosec,
            (position._x, position._y, _yaw(pose._orientation)), odometry_twist2d(msg))


def odometry_twist2d(msg: Odometry) -> Floats3:
    """The body twist ``(vx_mps, vy_mps, wz_radps)`` of an ``Odometry`` (as
    :func:`wheelsim.ros.conversions.twist2d` of its twist)."""
    twist = msg._twist._twist
    linear = twist._linear
    return linear._x, linear._y, twist._angular._z


def stamped_pose2d(msg: PoseWithCovarianceStamped) -> tuple[int, str, float, float, float]:
    """``(stamp_ns, frame_id, x_m, y_m, yaw_rad)`` of a ``PoseWithCovarianceStamped``: its
    header's stamp and frame, and :func:`wheelsim.ros.conversions.pose2d` of its pose."""
    header, pose = msg._header, msg._pose._pose
    stamp, position = header._stamp, pose._position
    return (stamp._sec * NS_PER_S + stamp._nanosec, header._frame_id, position._x, position._y,
            _yaw(pose._orientation))


def write_stamp(stamp: Time, stamp_ns: int) -> None:
    """Set a ``builtin_interfaces/Time`` to a time [ns] (>= 0), as
    :func:`wheelsim.ros.conversions.time_msg`."""
    stamp._sec, stamp._nanosec = divmod(stamp_ns, NS_PER_S)


def write_planar(
    position: Point | Vector3, orientation: Quaternion, x_m: float, y_m: float, qz: float,
    qw: float,
) -> None:
    """:func:`wheelsim.ros.conversions.fill_planar` of a pose whose yaw is given by its
    quaternion's ``qz``, ``qw`` (:func:`wheelsim.core.geometry.angles.yaw_quaternion_zw`), all
    four floats."""
    position._x = x_m
    position._y = y_m
    orientation._z = qz
    orientation._w = qw


def write_twist(linear: Vector3, angular: Vector3, vx_mps: float, vy_mps: float,
                wz_radps: float) -> None:
    """:func:`wheelsim.ros.conversions.fill_twist` into the linear and angular parts of a
    twist, all three floats."""
    linear._x = vx_mps
    linear._y = vy_mps
    angular._z = wz_radps


def write_joints(joint_state: JointState, positions: array, velocities: array) -> None:
    """Set a ``sensor_msgs/JointState``'s positions and velocities, each an ``array('d')``
    (what the setters store: they would copy one)."""
    joint_state._position = positions
    joint_state._velocity = velocities


check_slots()
