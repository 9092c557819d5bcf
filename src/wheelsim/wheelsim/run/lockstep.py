"""Lock-step execution of ROS 2 nodes composed in one process, for deterministic headless runs.

The nodes are the ordinary node classes, built with ``use_sim_time: true``. Instead of spinning an
executor, :class:`LockstepExecutor` owns simulated time:

1. it moves simulated time to the next timer due time: ``now()`` of every driven clock returns
   the executor's ``Time`` of that event from then on (without asking rcl: about 2.5 us less a
   call; rclpy's ``Time`` is immutable, so sharing it is safe), and the clocks that have
   clock-jump callbacks get it as their ROS time override (``ROSClock.set_ros_time_override``,
   which runs those callbacks);
2. it calls the callbacks of the ROS-time timers due then, in node order, then in creation
   order;
3. every message published by those callbacks is delivered in-process, first in first out, to
   the callbacks of the subscriptions on the same topic in this process (and to an optional
   recorder), until no message is pending: after the clock change and after each timer callback;
4. only then does time move on.

So time advances only when every node has handled the current time, and the same inputs give the
same sequence of callbacks and messages on any machine and under any load. Messages never touch
DDS (a publisher's ``publish`` is replaced while the executor is open), which is also what makes
runs far faster than real time. Subscribers receive the published object itself, as rclcpp's
intra-process delivery does: a callback must not modify a received message nor keep it after it
returns, and a publisher may fill the same object again once it has been delivered (wheelsim's
nodes keep to both rules; refilling one that is still pending raises RuntimeError).

ROS time 0 means "no clock yet" to a node following ``/clock``, so a run should start at a time
after 0 (the ``wheelsim`` runner starts at 1 s): setting a node's clock when it is added is then
the first clock it sees.

Besides ``now()``, which the executor answers, a clock's time reaches a node only through its jump
callbacks (the executor calls the timers itself), so the override is set at every event only on
the clocks that have one (each override costs about 2 us,
and a run has thousands of events): the executor notes every ``JumpHandle`` registered and
unregistered while it is open. A node built before the executor was opened may have jump
callbacks it never saw, so its clock is set at every event. Every driven clock is set when its
node is added, when a run ends and when the executor closes, so rcl's time is the executor's
whenever no event is under way.

Only public rclpy API is used (``Node.publishers/subscriptions/timers``, ``Timer.callback``,
``Timer.timer_period_ns``, ``Subscription.msg_type/callback``, ``ROSClock.set_ros_time_override``,
``Clock.now``, ``JumpHandle``), which is the same on Jazzy and Kilted. Services and parameter
events are not served during a run, and a node must keep ``use_sim_time`` true while it is
driven (it is checked when the node is added; its clock's ``now()`` answers the executor's time
until the run ends).
"""

from __future__ import annotations

import collections
import weakref
from collections.abc import Callable
from typing import Any

from rclpy.clock import Clock, JumpHandle, ROSClock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.time import Time
from rclpy.timer import Timer

Recorder = Callable[[str, Any, int], None]
"""Called as ``recorder(topic, message, sim_time_ns)`` for every message published."""


class LockstepExecutor:
    """Drive ``nodes`` in lock-step simulated time, delivering their messages in-process.

    Use as a context manager and create the nodes inside it: every publisher in this process is
    redirected to the in-process delivery while it is open, so messages a node publishes in its
    constructor (a transient-local robot description, say) are delivered when the run starts.
    Time starts at ``start_time_ns``.

    Who receives what is looked up in a topic -> (message type, callback) table, rebuilt only
    after a subscription was created or destroyed (checked before each batch of deliveries, not per
    message: a subscription created in a subscription callback receives messages from the next
    timer callback on); the ROS-time timers are re-scanned only after a timer was created,
    destroyed, cancelled, reset or given a new period (``Node.create_timer``,
    ``Node.destroy_timer``, ``Timer.cancel``, ``Timer.reset`` and the ``Timer.timer_period_ns``
    setter note it while the executor is open; a new period applies from the timer's next
    event on).

    The clocks are set as the module documentation says; nodes built inside the ``with``
    block (the usual way) have theirs set at every event only if they register jump callbacks.
    """

    def __init__(self, recorder: Recorder | None = None, start_time_ns: int = 0) -> None:
        self._nodes: list[Node] = []
        self._clocks: list[ROSClock] = []
        self._clock_ids: set[int] = set()  # id() of the clocks in _clocks
        self._now = Time(nanoseconds=start_time_ns, clock_type=ClockType.ROS_TIME)
        self._recorder = recorder
        self._now_ns = start_time_ns
        self._pending: collections.deque[tuple[str, Any]] = collections.deque()
        self._pending_ids: set[int] = set()  # of the messages in _pending
        self._due_ns: dict[Timer, int] = {}
        self._period_ns: dict[Timer, int] = {}
        self._routes: dict[str, list[tuple[type, Callable[[Any], None]]]] = {}
        self._timers_changed = self._subscriptions_changed = True
        self._patched: list[tuple[type, str, Any]] = []
        self._built_here: weakref.WeakSet[Node] = weakref.WeakSet()  # nodes built while open
        self._jump_handles: dict[JumpHandle, Clock] = {}  # registered while open, still live
        self._always_set: set[int] = set()  # id() of the clocks of nodes built before opening
        self._set_each_event: list[ROSClock] = []  # the clocks set at every event

    def add_node(self, node: Node) -> None:
        """Drive ``node`` from now on; it must have been created with ``use_sim_time: true``."""
        if not node.get_parameter('use_sim_time').value:
            raise ValueError(f'node {node.get_name()} must be created with use_sim_time: true')
        clock = node.get_clock()
        self._nodes.append(node)
        self._clocks.append(clock)
        self._clock_ids.add(id(clock))
        if node not in self._built_here:
            self._always_set.add(id(clock))
        self._timers_changed = self._subscriptions_changed = True
        self._refresh_clocks_set_each_event()
        clock.set_ros_time_override(self._now)

    @property
    def now_ns(self) -> int:
        """Current simulated time [ns]."""
        return self._now_ns

    def __enter__(self) -> LockstepExecutor:
        pending, pending_ids = self._pending, self._pending_ids
        topic_names: dict[Publisher, str] = {}  # asking rclpy each time costs a C call

        def publish(publisher: Publisher, msg: Any) -> None:
            topic = topic_names.get(publisher)
            if topic is None:
                topic = topic_names[publisher] = publisher.topic_name
            if id(msg) in pending_ids:
                raise RuntimeError(
                    f'a message on {topic} was published again before it was delivered: '
                    'publish a new message object, or publish once per callback'
                )
            pending.append((topic, msg))
            pending_ids.add(id(msg))

        self._patch(Publisher, 'publish', lambda original: publish)
        self._patch(Clock, 'now', self._now_of_driven_clocks)
        for cls, name in ((Node, 'create_timer'), (Node, 'destroy_timer'), (Timer, 'cancel'),
                          (Timer, 'reset')):
            self._patch(cls, name, lambda original: self._noting(original, '_timers_changed'))
        self._patch(Timer, 'timer_period_ns', lambda original: property(
            original.fget, self._noting(original.fset, '_timers_changed')))
        for name in ('create_subscription', 'destroy_subscription'):
            self._patch(Node, name,
                        lambda original: self._noting(original, '_subscriptions_changed'))
        self._patch(Node, '__init__', self._noting_node_built)
        self._patch(JumpHandle, '__init__', self._noting_jump_handle)
        self._patch(JumpHandle, 'unregister', self._noting_unregister)
        return self

    def __exit__(self, *exc: object) -> None:
        for cls, name, original in reversed(self._patched):
            setattr(cls, name, original)
        self._patched.clear()
        self._set_every_clock()

    def _patch(self, cls: type, name: str, replacement: Callable[[Any], Any]) -> None:
        """Replace method ``name`` of ``cls`` by ``replacement(original)`` until exit."""
        original = cls.__dict__[name]
        self._patched.append((cls, name, original))
        setattr(cls, name, replacement(original))

    def _now_of_driven_clocks(self, original: Callable[[Clock], Time]) -> Callable[[Clock], Time]:
        """``Clock.now``, answering the current event's time for the clocks this executor sets."""
        clock_ids = self._clock_ids

        def now(clock: Clock) -> Time:
            return self._now if id(clock) in clock_ids else original(clock)

        return now

    def _noting_node_built(self, original: Callable[..., None]) -> Callable[..., None]:
        """``Node.__init__``, noting the node as built while this executor is open."""
        built_here = self._built_here

        def __init__(node: Node, *args: Any, **kwargs: Any) -> None:
            original(node, *args, **kwargs)
            built_here.add(node)

        return __init__

    def _noting_jump_handle(self, original: Callable[..., None]) -> Callable[..., None]:
        """``JumpHandle.__init__``, noting the handle of a clock; a driven clock first gets the
        current time from rcl's point of view, so its first jump is that of the next event."""

        def __init__(handle: JumpHandle, *, clock: Clock, **kwargs: Any) -> None:
            if id(clock) in self._clock_ids and clock not in self._set_each_event:
                clock.set_ros_time_override(self._now)
            original(handle, clock=clock, **kwargs)
            self._jump_handles[handle] = clock
            self._refresh_clocks_set_each_event()

        return __init__

    def _noting_unregister(self, original: Callable[[JumpHandle], None]
                           ) -> Callable[[JumpHandle], None]:
        """``JumpHandle.unregister``, forgetting the handle."""

        def unregister(handle: JumpHandle) -> None:
            original(handle)
            if self._jump_handles.pop(handle, None) is not None:
                self._refresh_clocks_set_each_event()

        return unregister

    def _refresh_clocks_set_each_event(self) -> None:
        """The driven clocks with a jump callback (or unknown ones), in the order of their nodes."""
        with_callbacks = {id(clock) for clock in self._jump_handles.values()} | self._always_set
        self._set_each_event = [clock for clock in self._clocks if id(clock) in with_callbacks]

    def _noting(self, method: Any, flag: str) -> Callable[..., Any]:
        """``method``, setting attribute ``flag`` of this executor after each call."""

        def noting(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            setattr(self, flag, True)
            return result

        return noting

    def publish(self, topic: str, msg: Any) -> None:
        """Inject a message on ``topic`` (fully qualified) as if an outside node published it."""
        self._pending.append((topic, msg))
        self._pending_ids.add(id(msg))
        self._deliver()

    def run_until(self, end_ns: int, between: Callable[[int], None] | None = None) -> None:
        """Advance time event by event up to ``end_ns`` inclusive.

        ``between(now_ns)`` is called after each event settles (for progress display, pacing or
        stopping: raising from it stops the run cleanly between two events).
        """
        self._deliver()
        while True:
            self._refresh_timers()
            if not self._due_ns:
                raise RuntimeError('no timer in any node: nothing would ever happen')
            next_ns = min(self._due_ns.values())
            if next_ns > end_ns:
                self._now_ns = end_ns
                self._set_clocks()
                self._set_every_clock()
                return
            self._now_ns = next_ns
            self._set_clocks()
            self._deliver()
            for timer, due_ns in list(self._due_ns.items()):
                if due_ns == next_ns:
                    self._due_ns[timer] = due_ns + self._period_ns[timer]
                    timer.callback()
                    self._deliver()
            if between is not None:
                between(self._now_ns)

    def _set_clocks(self) -> None:
        """The event's time: ``now()`` of every driven clock, and the override of those that
        have jump callbacks (which it runs)."""
        now = self._now = Time(nanoseconds=self._now_ns, clock_type=ClockType.ROS_TIME)
        for clock in self._set_each_event:
            clock.set_ros_time_override(now)

    def _set_every_clock(self) -> None:
        """Set rcl's time of every driven clock to the current time (outside events; the clocks
        with jump callbacks have it already, so none of those runs)."""
        for clock in self._clocks:
            clock.set_ros_time_override(self._now)

    def _refresh_timers(self) -> None:
        """Track ROS-time timers created, destroyed, cancelled or reset since the last event.

        Timers on a steady or system clock (wall-clock housekeeping such as diagnostics) are
        not driven: in a lock-step run they would depend on the machine's speed.
        """
        if not self._timers_changed:
            return
        self._timers_changed = False
        current: dict[Timer, int] = {}
        self._period_ns = {}
        for node in self._nodes:
            for timer in node.timers:
                if timer.clock.clock_type == ClockType.ROS_TIME and not timer.is_canceled():
                    period_ns = self._period_ns[timer] = timer.timer_period_ns
                    due_ns = self._due_ns.get(timer)
                    current[timer] = self._now_ns + period_ns if due_ns is None else due_ns
        self._due_ns = current

    def _refresh_routes(self) -> None:
        """Rebuild the topic -> subscriptions table if the subscriptions changed."""
        if not self._subscriptions_changed:
            return
        self._subscriptions_changed = False
        self._routes = {}
        for node in self._nodes:
            for subscription in node.subscriptions:
                self._routes.setdefault(subscription.topic_name, []).append(
                    (subscription.msg_type, subscription.callback))

    def _deliver(self) -> None:
        if not self._pending:
            return
        self._refresh_routes()
        routes, recorder, pending = self._routes, self._recorder, self._pending
        pending_ids = self._pending_ids
        while pending:
            topic, msg = pending.popleft()
            pending_ids.discard(id(msg))
            if recorder is not None:
                recorder(topic, msg, self._now_ns)
            for msg_type, callback in routes.get(topic, ()):
                if isinstance(msg, msg_type):
                    callback(msg)
