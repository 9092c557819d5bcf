"""The seam between a wheelsim node and the middleware: everything a node asks of ROS.

A node class takes a :class:`NodeSeam` and does its middleware work through it only:
publishers, subscriptions, ROS-time timers, the ROS clock (its time and its changes), its
start-up parameters and its logger. The same node class runs on two kinds of seam:

- :class:`LiveSeam` (this module): rclpy as documented, on an rclpy ``Node`` the seam owns,
  spun by a plain executor (:mod:`wheelsim.ros.node_main`). Every publisher, subscription and
  timer is rclpy's own; the node is a ROS node like any other.
- :class:`wheelsim.run.lockstep.LockstepSeam`: a headless run's in-process transport and
  simulated clock. No rclpy node, no DDS participant, no socket.

What only a live node can have (services, clients, graph queries, live parameter updates,
steady-clock timers, threads on the wall clock) it takes from :attr:`NodeSeam.rclpy_node`: a
lock-step seam refuses that with :class:`NotServed`, naming the feature, so nothing is silently
left unserved. Nodes ask :attr:`NodeSeam.live` before building such features.

Names follow rclpy's (``create_publisher``, ``create_subscription``, ``create_timer``), and so
do the handles: a publisher has ``publish(msg)`` and ``topic_name``, a subscription and a timer
are given back to ``destroy_subscription`` / ``destroy_timer``, a logger has rclpy's
``info/warning/error/debug(message, throttle_duration_sec=..., once=...)``. Timers and clock
reads are on the node's ROS clock (simulated time with ``use_sim_time``, and always in
lock-step). A message passed to ``publish`` may be refilled by the node once its callback has
returned; a subscriber must not modify a received message nor keep it after its callback.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from rclpy.clock import JumpHandle, JumpThreshold
from rclpy.duration import Duration
from rclpy.node import Node


class NotServed(RuntimeError):
    """A feature a lock-step seam does not serve (a service, a client, a graph query, ...)."""


class NodeSeam(ABC):
    """What a wheelsim node may ask of the middleware (see the module documentation)."""

    #: True on rclpy (live), False in a headless lock-step run.
    live: bool

    @property
    @abstractmethod
    def name(self) -> str:
        """The node's name (``vehicle_sim``)."""

    @property
    @abstractmethod
    def namespace(self) -> str:
        """The node's namespace (``/`` or ``/robot1``)."""

    @property
    def fully_qualified_name(self) -> str:
        return self.namespace.rstrip('/') + '/' + self.name

    @property
    @abstractmethod
    def logger(self) -> Any:
        """rclpy's logger interface: ``info``, ``warning``, ``error``, ``debug``, each taking
        ``throttle_duration_sec`` and ``once``."""

    @property
    @abstractmethod
    def use_sim_time(self) -> bool:
        """Whether the node's ROS clock is simulated time (always, in lock-step)."""

    @abstractmethod
    def parameter_overrides(self) -> dict[str, Any]:
        """The parameter values given to the node at start-up, by name (``[]`` as None)."""

    @abstractmethod
    def create_publisher(self, msg_type: type, topic: str, qos_profile: Any) -> Any:
        """A publisher of ``msg_type`` on ``topic`` (relative, absolute or ``~/``)."""

    @abstractmethod
    def create_subscription(self, msg_type: type, topic: str,
                            callback: Callable[[Any], None], qos_profile: Any) -> Any:
        """Call ``callback(msg)`` for every ``msg_type`` message on ``topic``."""

    @abstractmethod
    def destroy_subscription(self, subscription: Any) -> None:
        """Stop a subscription made here."""

    @abstractmethod
    def create_timer(self, period_s: float, callback: Callable[[], None]) -> Any:
        """Call ``callback()`` every ``period_s`` of the node's ROS time, the first time one
        period from now."""

    @abstractmethod
    def destroy_timer(self, timer: Any) -> None:
        """Stop a timer made here."""

    @abstractmethod
    def now_ns(self) -> int:
        """The node's ROS time [ns] (0 while following ``/clock`` before the first)."""

    @abstractmethod
    def on_time_change(self, callback: Callable[[], None]) -> Any:
        """Call ``callback()`` after every change of the node's ROS time; keep the returned
        handle for as long as the callback is wanted."""

    @property
    @abstractmethod
    def rclpy_node(self) -> Node:
        """The rclpy node of a live seam, for what only a live node can have; a lock-step seam
        raises :class:`NotServed`."""

    @abstractmethod
    def destroy(self) -> None:
        """Destroy everything made here (the rclpy node of a live seam)."""


class LiveSeam(NodeSeam):
    """The seam on rclpy: an rclpy ``Node`` built with ``node_kwargs`` (namespace, context,
    parameter overrides, ...), which :mod:`wheelsim.ros.node_main` spins."""

    live = True

    def __init__(self, name: str, **node_kwargs: Any) -> None:
        self._node = Node(name, **node_kwargs)
        self._clock = self._node.get_clock()

    @property
    def name(self) -> str:
        return self._node.get_name()

    @property
    def namespace(self) -> str:
        return self._node.get_namespace()

    @property
    def logger(self) -> Any:
        return self._node.get_logger()

    @property
    def use_sim_time(self) -> bool:
        return bool(self._node.get_parameter('use_sim_time').value)

    def parameter_overrides(self) -> dict[str, Any]:
        # rclpy keeps them in Node._parameter_overrides (the same attribute from Humble
        # through Kilted) and offers no public getter; automatically_declare_parameters_
        # from_overrides is no substitute: it fails on [] (an empty YAML list has no type).
        # Read without a default: an rclpy without it stops every node's start at once.
        overrides = self._node._parameter_overrides
        return {name: param.value for name, param in overrides.items()}

    def create_publisher(self, msg_type: type, topic: str, qos_profile: Any) -> Any:
        return self._node.create_publisher(msg_type, topic, qos_profile)

    def create_subscription(self, msg_type: type, topic: str,
                            callback: Callable[[Any], None], qos_profile: Any) -> Any:
        return self._node.create_subscription(msg_type, topic, callback, qos_profile)

    def destroy_subscription(self, subscription: Any) -> None:
        self._node.destroy_subscription(subscription)

    def create_timer(self, period_s: float, callback: Callable[[], None]) -> Any:
        return self._node.create_timer(period_s, callback)

    def destroy_timer(self, timer: Any) -> None:
        self._node.destroy_timer(timer)

    def now_ns(self) -> int:
        return self._clock.now().nanoseconds

    def on_time_change(self, callback: Callable[[], None]) -> Any:
        # rclpy's JumpHandle, made directly: its post-jump callback is given rcl's jump as a
        # dictionary, which Clock.create_jump_callback would turn into a TimeJump holding a
        # Duration at every change (nobody here reads it).
        threshold = JumpThreshold(min_forward=Duration(nanoseconds=1),
                                  min_backward=Duration(nanoseconds=-1), on_clock_change=True)
        return JumpHandle(clock=self._clock, threshold=threshold, pre_callback=None,
                          post_callback=lambda _jump: callback())

    @property
    def rclpy_node(self) -> Node:
        return self._node

    def destroy(self) -> None:
        self._node.destroy_node()
