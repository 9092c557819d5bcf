"""Lock-step execution of ROS 2 nodes composed in one process, for deterministic headless runs.

The nodes are the ordinary node classes, built with ``use_sim_time: true``. Instead of spinning an
executor, :class:`LockstepExecutor` owns simulated time:

1. it moves simulated time to the next timer due time: ``now()`` of every driven clock returns
   the executor's ``Time`` of that event from then on (without asking rcl: about 2.5 us less a
   call; rclpy's ``Time`` is immutable, so sharing it is safe; see :class:`_EventTime` for what
   it builds only on demand), and the clock-jump callbacks of the driven clocks run (see
   below);
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
callbacks (the executor calls the timers itself). The executor notes every ``JumpHandle``
registered and unregistered while it is open (its clock, threshold and callbacks) and, at every
event, calls those of the driven clocks itself, as rcl would on a ``set_ros_time_override``
(``rcl_set_ros_time_override`` and ``rcl_clock_call_callbacks`` in rcl's ``time.c``): the pre-jump
callbacks whose threshold the jump reaches, then their post-jump callbacks with
``{'clock_change': ClockChange.ROS_TIME_NO_CHANGE, 'delta': nanoseconds}``. That spares rclpy's
and rcl's path at every event, and the jump callbacks of rcl's own timers on those clocks (never
called through rcl in a lock-step run, each triggers a middleware guard condition at every jump
forward, ``_rcl_timer_time_jump`` in rcl's ``timer.c``): rcl's time of those clocks is not set
during a run. A node built before the executor was opened may have jump callbacks it never saw,
so its clock's rcl time is set at every event instead, which runs them. Every driven clock's rcl
time is set when its node is added, when a run ends and when the executor closes (the callbacks
the executor called already are not called again then), so rcl's time is the executor's
whenever no event is under way.

Public rclpy API is used (``Node.publishers/subscriptions/timers``, ``Timer.callback``,
``Timer.timer_period_ns``, ``Subscription.msg_type/callback``, ``ROSClock.set_ros_time_override``,
``Clock.now``, ``Time``, ``JumpHandle``, ``JumpThreshold``, ``ClockChange``), the same on Jazzy and
Kilted, and one private attribute, ``Time._time_handle`` (rcl's time point, read by rclpy's
clocks; the same in both), which :class:`_EventTime` builds on demand. Services and parameter
events are not served during a run, and a node must keep ``use_sim_time`` true while it is
driven (it is checked when the node is added; its clock's ``now()`` answers the executor's time
until the run ends).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import numbers
import weakref
from collections.abc import Callable
from typing import Any

from rclpy.clock import Clock, ClockChange, JumpHandle, JumpThreshold, ROSClock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.time import Time
from rclpy.timer import Timer

Recorder = Callable[[str, Any, int], None]
"""Called as ``recorder(topic, message, sim_time_ns)`` for every message published."""


class _EventTime(Time):
    """The ``Time`` of a lock-step event (ROS time), as the driven clocks' ``now()`` gives it.

    An rclpy ``Time`` holds an rcl time point (``_time_handle``) and reads its ``nanoseconds``
    and ``clock_type`` from it through rcl: about 2.9 us to build and 0.6 us a read, at every
    event, although most events only need the nanoseconds. This one keeps the nanoseconds as a
    plain int and makes the time point when rclpy asks for it (``Clock.set_ros_time_override``,
    ``Clock.sleep_until``); every other method of ``Time`` works from ``nanoseconds`` and
    ``clock_type``, so it is a ``Time`` in every other respect.
    """

    def __init__(self, nanoseconds: int) -> None:  # not Time.__init__: no rcl time point yet
        self._nanoseconds = nanoseconds  # an int in [0, 2**63): see _time_ns

    @property
    def nanoseconds(self) -> int:
        return self._nanoseconds

    @property
    def clock_type(self) -> ClockType:
        return _ROS_TIME_TYPE

    @functools.cached_property
    def _time_handle(self) -> Any:
        return Time(nanoseconds=self._nanoseconds, clock_type=ClockType.ROS_TIME)._time_handle


_ROS_TIME_TYPE = Time(clock_type=ClockType.ROS_TIME).clock_type
"""What an rclpy ``Time`` of ROS time gives as its ``clock_type`` (rcl's own enum value)."""


def _time_ns(value: int, name: str) -> int:
    """``value`` as a time for :class:`_EventTime`: an integer in [0, 2**63) ns, as rclpy's
    ``Time`` requires, else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or \
            not 0 <= value < 2**63:
        raise ValueError(f'{name} = {value!r} must be an integer time in [0, 2**63) ns')
    return int(value)


@dataclasses.dataclass(frozen=True)
class _JumpCallbacks:
    """The callbacks of a ``JumpHandle`` and when rcl calls them: on a jump of at least
    ``min_forward_ns`` forward or ``min_backward_ns`` (negative) backward; 0 means never."""

    clock: Clock
    min_forward_ns: int
    min_backward_ns: int
    pre_callback: Callable[[], None] | None
    post_callback: Callable[[dict[str, Any]], None] | None

    @classmethod
    def of(cls, clock: Clock, threshold: JumpThreshold, pre_callback: Any, post_callback: Any
           ) -> _JumpCallbacks:
        """As ``JumpHandle`` gives them to rcl (a threshold of ``None`` is 0)."""
        forward, backward = threshold.min_forward, threshold.min_backward
        return cls(clock, 0 if forward is None else forward.nanoseconds,
                   0 if backward is None else backward.nanoseconds, pre_callback, post_callback)


def _call_jump_callbacks(callbacks: list[_JumpCallbacks], delta_ns: int) -> None:
    """What rcl does on a ``set_ros_time_override`` that moves a clock with these callbacks (in
    registration order) by ``delta_ns``: the pre-jump callbacks the jump reaches (a jump that
    is not a clock change reaches those whose forward threshold is positive and at most the
    jump, or whose backward threshold is negative and at least it: ``rcl_clock_call_callbacks``),
    then their post-jump callbacks with the jump as rclpy gives it."""
    reached = []
    for c in callbacks:
        if (0 < c.min_forward_ns <= delta_ns) or (delta_ns <= c.min_backward_ns < 0):
            reached.append(c)
            if c.pre_callback is not None:
                c.pre_callback()
    for c in reached:
        if c.post_callback is not None:
            c.post_callback({'clock_change': ClockChange.ROS_TIME_NO_CHANGE, 'delta': delta_ns})


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

    The clocks are set as the module documentation says: the jump callbacks of nodes built
    inside the ``with`` block (the usual way) are called by the executor itself.
    """

    def __init__(self, recorder: Recorder | None = None, start_time_ns: int = 0) -> None:
        self._nodes: list[Node] = []
        self._clocks: list[ROSClock] = []
        self._clock_ids: set[int] = set()  # id() of the clocks in _clocks
        start_time_ns = _time_ns(start_time_ns, 'start_time_ns')
        self._now: Time = _EventTime(start_time_ns)
        self._recorder = recorder
        self._now_ns = start_time_ns
        self._clocks_ns = start_time_ns  # the time the driven clocks were given last
        self._pending: collections.deque[tuple[str, Any]] = collections.deque()
        self._pending_ids: set[int] = set()  # of the messages in _pending
        self._due_ns: dict[Timer, int] = {}
        self._period_ns: dict[Timer, int] = {}
        self._routes: dict[str, list[tuple[type, Callable[[Any], None]]]] = {}
        self._timers_changed = self._subscriptions_changed = True
        self._patched: list[tuple[type, str, Any]] = []
        self._built_here: weakref.WeakSet[Node] = weakref.WeakSet()  # nodes built while open
        self._jump_handles: dict[JumpHandle, _JumpCallbacks] = {}  # registered while open, live
        self._always_set: set[int] = set()  # id() of the clocks of nodes built before opening
        self._set_each_event: list[ROSClock] = []  # the clocks whose rcl time each event sets
        self._called_each_event: list[list[_JumpCallbacks]] = []  # per clock, called by us
        self._catching_up = False  # True while rcl's time of the driven clocks is brought level

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
        clock.set_ros_time_override(self._now)  # its jump callbacks see their first time
        self._refresh_clocks_set_each_event()

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
        """``JumpHandle.__init__``, noting the handle's clock, threshold and callbacks; rcl
        gets callbacks that do nothing while the executor brings rcl's time of a clock level
        (their callbacks were called already)."""

        def __init__(handle: JumpHandle, *, clock: Clock, threshold: JumpThreshold,
                     pre_callback: Any, post_callback: Any) -> None:
            original(handle, clock=clock, threshold=threshold,
                     pre_callback=self._unless_catching_up(pre_callback),
                     post_callback=self._unless_catching_up(post_callback))
            self._jump_handles[handle] = _JumpCallbacks.of(
                clock, threshold, pre_callback, post_callback)
            self._refresh_clocks_set_each_event()

        return __init__

    def _unless_catching_up(self, callback: Any) -> Any:
        """``callback``, except while rcl's time of the driven clocks is brought level (what
        is not callable is passed on as it is, for ``JumpHandle`` to refuse)."""
        if not callable(callback):
            return callback

        def unless_catching_up(*args: Any) -> None:
            if not self._catching_up:
                callback(*args)

        return unless_catching_up

    def _noting_unregister(self, original: Callable[[JumpHandle], None]
                           ) -> Callable[[JumpHandle], None]:
        """``JumpHandle.unregister``, forgetting the handle."""

        def unregister(handle: JumpHandle) -> None:
            original(handle)
            if self._jump_handles.pop(handle, None) is not None:
                self._refresh_clocks_set_each_event()

        return unregister

    def _refresh_clocks_set_each_event(self) -> None:
        """In the order of their nodes: the clocks whose rcl time each event sets (of nodes
        built before opening: their jump callbacks are unknown), and the jump callbacks of the
        others, which the executor calls itself."""
        known: dict[int, list[_JumpCallbacks]] = {}
        for callbacks in self._jump_handles.values():
            known.setdefault(id(callbacks.clock), []).append(callbacks)
        self._set_each_event = [clock for clock in self._clocks if id(clock) in self._always_set]
        self._called_each_event = [known[id(clock)] for clock in self._clocks
                                   if id(clock) not in self._always_set and id(clock) in known]

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
        end_ns = _time_ns(end_ns, 'end_ns')
        self._deliver()
        while True:
            if self._timers_changed:
                self._refresh_timers()
            due = self._due_ns
            if not due:
                raise RuntimeError('no timer in any node: nothing would ever happen')
            next_ns = min(due.values())
            if next_ns > end_ns:
                self._now_ns = end_ns
                self._set_clocks()
                self._set_every_clock()
                return
            self._now_ns = next_ns
            self._set_clocks()
            if self._pending:
                self._deliver()
            for timer, due_ns in list(due.items()):
                if due_ns == next_ns:
                    due[timer] = due_ns + self._period_ns[timer]
                    timer.callback()
                    if self._pending:
                        self._deliver()
            if between is not None:
                between(next_ns)

    def _set_clocks(self) -> None:
        """The event's time: ``now()`` of every driven clock, the jump callbacks of those the
        executor knows, and rcl's time of the others that may have some."""
        delta_ns, self._clocks_ns = self._now_ns - self._clocks_ns, self._now_ns
        now = self._now = _EventTime(self._now_ns)
        for clock in self._set_each_event:
            clock.set_ros_time_override(now)
        for callbacks in self._called_each_event:
            _call_jump_callbacks(callbacks, delta_ns)

    def _set_every_clock(self) -> None:
        """Set rcl's time of every driven clock to the current time (outside events; every
        driven clock's jump callbacks have seen it already, so none of them runs)."""
        self._catching_up = True
        try:
            for clock in self._clocks:
                clock.set_ros_time_override(self._now)
        finally:
            self._catching_up = False

    def _refresh_timers(self) -> None:
        """Track ROS-time timers created, destroyed, cancelled or reset since the last event
        (called when that flag is set).

        Timers on a steady or system clock (wall-clock housekeeping such as diagnostics) are
        not driven: in a lock-step run they would depend on the machine's speed.
        """
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
        pending_ids, now_ns = self._pending_ids, self._now_ns
        while pending:
            topic, msg = pending.popleft()
            pending_ids.discard(id(msg))
            if recorder is not None:
                recorder(topic, msg, now_ns)
            for msg_type, callback in routes.get(topic, ()):
                if isinstance(msg, msg_type):
                    callback(msg)
