"""QoS profiles of the public interface (docs/interface.md, "Topics")."""

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy


def _keep_last(depth: int, reliability: ReliabilityPolicy, durability: DurabilityPolicy):
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=depth, reliability=reliability,
        durability=durability,
    )


_RELIABLE = ReliabilityPolicy.RELIABLE
_VOLATILE, _TRANSIENT_LOCAL = DurabilityPolicy.VOLATILE, DurabilityPolicy.TRANSIENT_LOCAL

#: Everything not listed below: reliable, volatile, depth 10.
DEFAULT = _keep_last(10, _RELIABLE, _VOLATILE)

#: ``robot_description``, ``plan``, ``/tf_static``: a late subscriber still gets the last value.
LATCHED = _keep_last(1, _RELIABLE, _TRANSIENT_LOCAL)

#: ``/tf``: reliable, volatile, depth 100.
TF = _keep_last(100, _RELIABLE, _VOLATILE)

#: Publishing ``/clock``: reliable so that both best-effort readers (the rclpy and rclcpp time
#: sources, depth 1) and reliable readers match; depth 10 so that a reliable reader that falls
#: a few messages behind (a recorder) still gets every tick.
CLOCK_PUBLISHER = _keep_last(10, _RELIABLE, _VOLATILE)
