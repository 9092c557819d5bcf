"""The ``cmd_vel`` input: Twist or TwistStamped, type detection, rejection and saturation.

``cmd_vel_type``:

- ``twist`` / ``twist_stamped``: subscribe that type; warn (once per change of the publisher
  set) when publishers of the other type appear, since their messages never arrive.
- ``auto``: subscribe the type the publishers use; switch (with a notice) when the publishers
  change type; when both types are published, keep the current one and warn naming the ignored
  publishers.

The publishers are looked up by :meth:`CmdVelInput.check_publishers`, which the node calls every
``PUBLISHER_CHECK_PERIOD_S`` of wall time, from any thread (rclpy reports no graph change as an
event, and DDS reports no publisher of another type to a subscription). A switch of type itself
happens on the executor thread, woken by a guard condition: only there is the old
subscription's DDS topic released at once, and DDS refuses a second type on one topic.

Every message is checked: a non-finite value rejects the message (counted, warning throttled);
a value beyond the limits is saturated (counted, warning throttled). Accepted commands reach
``on_command(topic_name, vx_mps, vy_mps, wz_radps, stamp_ns)`` with ``topic_name`` the resolved
topic they came on (``cmd_vel`` or ``wheel_commands``) and ``stamp_ns`` the header stamp of a
TwistStamped and ``None`` for a Twist or a TwistStamped with a zero stamp (by arrival). A
TwistStamped is a twist of the vehicle's body: a ``header.frame_id`` other than empty or one of
``body_frames`` is warned about once per frame (the twist is not converted).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from geometry_msgs.msg import Twist, TwistStamped

from wheelsim.core.params import ParameterError
from wheelsim.ros import qos
from wheelsim.ros.conversions import stamp_ns, twist2d, twist_is_finite
from wheelsim.ros.other_publishers import UNDISCOVERED_NODE_NAME
from wheelsim.ros.seam import NodeSeam

TYPE_NAMES = {Twist: 'geometry_msgs/msg/Twist', TwistStamped: 'geometry_msgs/msg/TwistStamped'}
_BY_SETTING = {'twist': Twist, 'twist_stamped': TwistStamped}
WARN_PERIOD_S = 2.0  # between two warnings of one kind [s]
PUBLISHER_CHECK_PERIOD_S = 0.25
#: Publisher checks a warning waits for the name of a node not discovered yet
#: (:data:`UNDISCOVERED_NODE_NAME`; 1 s), rather than naming the placeholder and warning again,
#: with the name, a moment later.
UNDISCOVERED_NAME_CHECKS = 4

OnCommand = Callable[[str, float, float, float, 'int | None'], None]


def saturate(value: float, limit: float) -> float:
    """``value`` clamped to ``[-limit, limit]``."""
    return max(-limit, min(limit, value))


class CmdVelInput:
    """Subscribes ``topic`` and hands sanitised planar commands to ``on_command``."""

    def __init__(
        self,
        seam: NodeSeam,
        cmd_vel_type: str,
        on_command: OnCommand,
        limits: tuple[float, float],
        topic: str = 'cmd_vel',
        body_frames: tuple[str, ...] = (),
    ) -> None:
        self._seam = seam
        self._body_frames = body_frames
        self._frames_seen = {'', *body_frames}  # the body's, and those warned about
        self._auto = cmd_vel_type == 'auto'
        if self._auto and not seam.live:
            raise ParameterError(
                'cmd_vel_type', cmd_vel_type, 'must be twist or twist_stamped in a headless run: '
                'auto follows the types other nodes publish, which only a live ROS graph tells')
        self._on_command = on_command
        self.limits = limits  # (linear m/s, angular rad/s); may be replaced live
        self._topic = topic
        self.rejected = 0
        self.saturated = 0
        self._warned_zero_stamp = False
        self._last_publisher_report: tuple = ()
        self._undiscovered_checks = 0  # checks in a row that waited for a publisher's name
        self.msg_type = _BY_SETTING.get(cmd_vel_type, Twist)
        self._subscription = self._subscribe(self.msg_type)
        #: The resolved topic name (namespace and remapping applied); the same for both types.
        self.topic_name: str = self._subscription.topic_name
        if self._auto:  # follows the graph: live only (a lock-step seam refuses it, naming it)
            self._switch_guard = seam.rclpy_node.create_guard_condition(self._switch_type)

    def _subscribe(self, msg_type: type):
        return self._seam.create_subscription(msg_type, self._topic, self._on_message, qos.DEFAULT)

    def publisher_types(self) -> dict[type, list[str]]:
        """The cmd_vel publishers of each known type, as fully qualified node names."""
        found: dict[type, list[str]] = {Twist: [], TwistStamped: []}
        for info in self._seam.rclpy_node.get_publishers_info_by_topic(self.topic_name):
            for msg_type, name in TYPE_NAMES.items():
                if info.topic_type == name:
                    namespace = info.node_namespace.rstrip('/')
                    found[msg_type].append(f'{namespace}/{info.node_name}')
        return found

    def _type_to_follow(self, found: dict[type, list[str]], current: type) -> type | None:
        """auto: the other type when every publisher uses it, else None (keep ``current``)."""
        types = [t for t in (Twist, TwistStamped) if found[t]]
        return types[0] if self._auto and types == [self._other(current)] else None

    def check_publishers(self) -> None:
        """Follow the publishers' type (auto) and warn about publishers that cannot match,
        naming their nodes (a node not discovered yet is waited for, up to
        :data:`UNDISCOVERED_NAME_CHECKS` checks).

        May run on any thread: a switch of type is left to :meth:`_switch_type` on the
        executor thread."""
        current = self.msg_type
        found = self.publisher_types()
        if self._type_to_follow(found, current) is not None:
            self._switch_guard.trigger()
            return
        ignored = found[self._other(current)]
        if any(name.endswith(f'/{UNDISCOVERED_NODE_NAME}') for name in ignored) and (
                self._undiscovered_checks < UNDISCOVERED_NAME_CHECKS):
            self._undiscovered_checks += 1
            return  # warn when its node's name is known (or after UNDISCOVERED_NAME_CHECKS)
        self._undiscovered_checks = 0
        report = tuple(sorted(ignored))
        if ignored and report != self._last_publisher_report:
            both = ' (both types are published)' if found[current] else ''
            self._seam.logger.warning(
                f'{self.topic_name}: ignoring {", ".join(report)}: they publish '
                f'{TYPE_NAMES[self._other(current)]} but this node takes '
                f'{TYPE_NAMES[current]}{both}; set cmd_vel_type or fix the publishers'
            )
        self._last_publisher_report = report

    def _switch_type(self) -> None:
        """Guard-condition callback (executor thread): subscribe the type the publishers use,
        if they still all use it (the graph is looked up again: it may have changed since)."""
        new_type = self._type_to_follow(self.publisher_types(), self.msg_type)
        if new_type is None:
            return
        self._seam.logger.info(
            f'{self.topic_name}: publishers use {TYPE_NAMES[new_type]}; subscribing to it'
        )
        self._seam.destroy_subscription(self._subscription)
        self._subscription = self._subscribe(new_type)
        self.msg_type = new_type

    @staticmethod
    def _other(msg_type: type) -> type:
        return TwistStamped if msg_type is Twist else Twist

    def reject(self, topic_name: str, why: str) -> str:
        """Count a rejected command on ``topic_name``; the warning saying ``why``, for the
        caller to log (throttled per call site: each reason has its own)."""
        self.rejected += 1
        return (f'{topic_name}: rejected a command {why} ({self.rejected} rejected so far, for '
                'any reason); the previous command stays in force')

    def accept(self, topic_name: str, vx_mps: float, vy_mps: float, wz_radps: float,
               stamp: int | None) -> None:
        """Hand a command from ``topic_name`` on, saturated to the limits (counted, warning
        throttled); a non-finite one is rejected (saturating NaN gives a limit: max/min)."""
        if not all(math.isfinite(value) for value in (vx_mps, vy_mps, wz_radps)):
            self._seam.logger.warning(  # not from a finite message: the conversions keep it finite
                self.reject(topic_name, f'whose twist ({vx_mps:g}, {vy_mps:g}, {wz_radps:g}) is '
                            'not finite'), throttle_duration_sec=WARN_PERIOD_S)
            return
        linear, angular = self.limits
        clamped = (saturate(vx_mps, linear), saturate(vy_mps, linear), saturate(wz_radps, angular))
        if clamped != (vx_mps, vy_mps, wz_radps):
            self.saturated += 1
            self._seam.logger.warning(
                f'{topic_name}: saturated an absurd command ({vx_mps:g}, {vy_mps:g}, '
                f'{wz_radps:g}) to cmd_vel_limits ({self.saturated} so far)',
                throttle_duration_sec=WARN_PERIOD_S,
            )
        self._on_command(topic_name, *clamped, stamp)

    def _on_message(self, msg: Twist | TwistStamped) -> None:
        twist = msg.twist if isinstance(msg, TwistStamped) else msg
        if not twist_is_finite(twist):
            self._seam.logger.warning(self.reject(self.topic_name, 'with a non-finite value'),
                                      throttle_duration_sec=WARN_PERIOD_S)
            return
        stamp = stamp_ns(msg.header.stamp) if isinstance(msg, TwistStamped) else None
        if stamp is not None and msg.header.frame_id not in self._frames_seen:
            frame = msg.header.frame_id
            self._frames_seen.add(frame)
            self._seam.logger.warning(
                f"{self.topic_name}: TwistStamped in frame '{frame}' taken as a twist of the "
                f"vehicle's body ({', '.join(self._body_frames)}): its frame is not converted")
        if stamp == 0:
            stamp = None
            if not self._warned_zero_stamp:
                self._warned_zero_stamp = True
                self._seam.logger.warning(
                    f'{self.topic_name}: TwistStamped with a zero stamp: its age is taken from '
                    'its arrival'
                )
        self.accept(self.topic_name, *twist2d(twist), stamp)
