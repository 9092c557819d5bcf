"""Lock-step: a headless run's in-process transport and simulated clock (wheelsim.ros.seam).

:class:`Lockstep` builds node classes on :class:`LockstepSeam` s and drives them in simulated
time, event by event:

1. it moves simulated time to the next timer due time: every seam's ``now_ns()`` answers it
   from then on, and then (in node order) the callbacks registered with ``on_time_change``
   run;
2. it calls the callbacks of the timers due then, in node order, then in creation order;
3. every message published by those callbacks is delivered in-process, first in first out, to
   the callbacks of the subscriptions on the same topic whose type it has (and to an optional
   recorder), until no message is pending: after the time change and after each timer
   callback;
4. only then does time move on.

So time advances only when every node has handled the current time, and the same inputs give the
same sequence of callbacks and messages on any machine and under any load. No rclpy node exists,
no DDS participant and no socket is opened, and no class of rclpy is changed: the node classes
are the ones that run live, on a different seam. Subscribers receive the published object
itself, as rclcpp's intra-process delivery does: a callback must not modify a received message
nor keep it after it returns, and a publisher may fill the same object again once it has been
delivered (refilling one that is still pending raises RuntimeError).

A node's time is 0 ("no clock yet", as a node following ``/clock`` sees it before the first)
while its class is built; once built, its seam is set to the run's time, which calls its time
change callbacks. Messages published while the nodes are built (a robot description, say) wait
until the run starts, as transient-local ones would be received then. Runs start after 0 (the
``wheelsim`` runner at 1 s).

Not served (:class:`wheelsim.ros.seam.NotServed`, naming it): anything that needs an rclpy node
(services, actions, clients, graph queries, steady-clock timers, live parameter changes),
async (coroutine) callbacks, a subscription callback taking the message info, a timer callback
taking a ``TimerInfo``, serialized bytes given to ``publish``, and the attributes of rclpy's
handles beyond what :mod:`wheelsim.ros.seam` lists (``timer.cancel()``, say). A timer or
subscription destroyed is not called again, not even for the event or the messages pending.
QoS is not modelled: a subscription receives the messages delivered after it was made (see
:class:`Lockstep`), and a message published before any subscription exists is delivered to
none (as to a volatile subscriber), except those of the start-up (above). Logging goes to
standard error in rcutils' format, stamped and throttled in simulated time.
"""

from __future__ import annotations

import collections
import inspect
import numbers
import sys
from collections.abc import Callable, Mapping
from typing import Any

from wheelsim.core.coroutines import is_async
from wheelsim.core.units import NS_PER_S
from wheelsim.ros.seam import NodeSeam, NotServed

Recorder = Callable[[str, Any, int], None]
"""Called as ``recorder(topic, message, sim_time_ns)`` for every message published."""


def _time_ns(value: int, name: str) -> int:
    """``value`` as a time: an integer in [0, 2**63) ns (ROS time's range), else ValueError
    naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or \
            not 0 <= value < 2**63:
        raise ValueError(f'{name} = {value!r} must be an integer time in [0, 2**63) ns')
    return int(value)


def resolve_topic(topic: str, namespace: str, node_name: str) -> str:
    """The fully qualified name of ``topic`` for a node (rclpy's rules without remapping):
    absolute as it is, ``~/x`` under the node, relative under the namespace."""
    if topic.startswith('/'):
        return topic
    base = namespace.rstrip('/')
    if topic == '~' or topic.startswith('~/'):
        return f'{base}/{node_name}{topic[1:]}'
    return f'{base}/{topic}'


def _callable_with(callback: Callable[..., Any], count: int) -> bool:
    """Whether ``callback`` takes ``count`` positional arguments (True where its signature
    cannot be read, as for some built-in functions)."""
    try:
        inspect.signature(callback).bind(*(object(),) * count)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _takes_timer_info(callback: Callable[..., Any]) -> bool:
    """Whether a parameter of ``callback`` is annotated ``TimerInfo`` (the class or its name),
    which rclpy's executors (Kilted on) fill with the timer's call times."""
    try:
        parameters = inspect.signature(callback).parameters.values()
    except ValueError:
        return False
    return any(getattr(p.annotation, '__name__', p.annotation) == 'TimerInfo'
               for p in parameters)


def _check_callback(callback: Callable[..., Any], what: str, arguments: int) -> None:
    """Refuse, naming ``what``, a callback this seam cannot call with ``arguments`` positional
    arguments (a subscription's: the message; a timer's: none), at once rather than when it
    is first due: not callable (TypeError), async or asking for what rclpy gives beside them,
    a subscription's message info or a timer's ``TimerInfo`` (:class:`NotServed`), or taking
    another number of arguments (TypeError)."""
    if not callable(callback):
        raise TypeError(f'{what}: the callback {callback!r} is not callable')
    if is_async(callback):
        raise NotServed(f'{what}: an async callback is not served in a headless run (its '
                        'coroutine would never be awaited)')
    if arguments == 0 and _takes_timer_info(callback):
        raise NotServed(f'{what}: a callback taking a TimerInfo is not served in a headless '
                        'run: take no argument and read seam.now_ns()')
    if _callable_with(callback, arguments):
        return
    if arguments == 1 and _callable_with(callback, 2):
        raise NotServed(f'{what}: a callback taking the message info (msg, info) is not '
                        'served in a headless run: take the message only')
    taken = 'no argument' if arguments == 0 else 'one argument, the message'
    raise TypeError(f'{what}: the callback {callback!r} must take {taken}')


#: What every rclpy ``QoSProfile`` has (this module needs no rclpy).
_QOS_POLICIES = ('history', 'depth', 'reliability', 'durability')


def _check_qos(qos_profile: Any, what: str) -> None:
    """A TypeError, naming ``what``, unless ``qos_profile`` is what rclpy takes: a QoSProfile
    (an object with its policies) or a history depth (an int)."""
    if isinstance(qos_profile, bool) or not (isinstance(qos_profile, int) or all(
            hasattr(qos_profile, policy) for policy in _QOS_POLICIES)):
        raise TypeError(f'{what}: the QoS {qos_profile!r} must be a QoSProfile or a history '
                        'depth (int), as rclpy takes')


class NotServedAttribute(NotServed, AttributeError):
    """An attribute of rclpy's handles that a lock-step handle lacks (an AttributeError too,
    so that ``hasattr`` and ``getattr`` with a default work as for any object)."""


class _SeamHandle:
    """What a handle of this seam lacks of rclpy's is refused by name: the seam's handles
    have what :mod:`wheelsim.ros.seam` lists, not the rest of rclpy's publisher, subscription,
    timer and logger."""

    _KIND = 'handle'

    def __getattr__(self, name: str) -> Any:
        if name.startswith('__'):
            raise AttributeError(name)
        raise NotServedAttribute(
            f'{self._KIND}.{name} is not served in a headless run: a node uses what the seam '
            'lists (docs/architecture.md); a timer or a subscription is stopped with '
            'seam.destroy_timer or seam.destroy_subscription')


class _Publisher(_SeamHandle):
    """A lock-step publisher: ``publish(msg)`` queues the message for in-process delivery.
    A message of another type is a TypeError, as rclpy's; serialized bytes (which rclpy
    publishes as they are) are not served."""

    _KIND = 'Publisher'

    def __init__(self, lockstep: Lockstep, msg_type: type, topic_name: str) -> None:
        self.msg_type, self.topic_name = msg_type, topic_name
        self._pending, self._pending_keys = lockstep._pending, lockstep._pending_keys

    def publish(self, msg: Any) -> None:
        if not isinstance(msg, self.msg_type):
            if isinstance(msg, bytes):
                raise NotServed(f'{self.topic_name}: publishing serialized bytes is not served '
                                f'in a headless run: publish a {self.msg_type.__name__}')
            raise TypeError(f'{self.topic_name}: expected {self.msg_type.__name__}, got '
                            f'{type(msg).__name__}')
        key = (self.topic_name, id(msg))
        if key in self._pending_keys:
            raise RuntimeError(
                f'a message on {self.topic_name} was published again before it was delivered: '
                'publish a new message object, or publish once per callback')
        self._pending.append(key + (msg,))
        self._pending_keys.add(key)


def _not_called(msg: Any) -> None:
    """The callback of a destroyed subscription's route (a delivery under way may still hold
    the route)."""


class _Subscription(_SeamHandle):
    _KIND = 'Subscription'

    def __init__(self, topic_name: str, msg_type: type, callback: Callable[[Any], None]):
        self.topic_name = topic_name
        # its entry in the lock-step's topic table, [message type, callback]: a list, so that
        # destroying it reaches a delivery already going through the table
        self.route = [msg_type, callback]


class _Timer(_SeamHandle):
    _KIND = 'Timer'

    def __init__(self, period_ns: int, callback: Callable[[], None]) -> None:
        self.timer_period_ns, self.callback = period_ns, callback


class _Logger(_SeamHandle):
    """rclpy's logger interface, writing rcutils' format (``[INFO] [sec.nsec] [name]: text``)
    to standard error, stamped with the node's simulated time; rclpy's filters per call site
    (``throttle_duration_sec`` in simulated time, whatever ``throttle_time_source_type``;
    ``skip_first``; ``once``; in that order, as rclpy applies them) and ``name``, and a
    TypeError for another keyword, as rclpy's. Severities below INFO are not shown."""

    _KIND = 'Logger'
    _SHOWN = ('INFO', 'WARN', 'ERROR', 'FATAL')

    def __init__(self, seam: LockstepSeam) -> None:
        self._seam = seam
        self._last_ns: dict[tuple[str, int], int] = {}  # by call site: when it last logged
        self._skipped: set[tuple[str, int]] = set()  # the call sites that skipped their first
        self._logged_once: set[tuple[str, int]] = set()  # the once call sites that logged

    def _log(self, severity: str, message: str, throttle_duration_sec: float | None = None,
             once: bool = False, skip_first: bool = False,
             throttle_time_source_type: Any = None, name: str | None = None) -> bool:
        # rclpy's filters, in its order (throttle, skip_first, once), each stopping the rest
        if throttle_duration_sec or once or skip_first:
            caller = sys._getframe(2)
            site = (caller.f_code.co_filename, caller.f_lineno)
        if throttle_duration_sec:
            now_ns = self._seam.now_ns()
            last_ns = self._last_ns.get(site)
            if last_ns is not None and now_ns - last_ns < round(throttle_duration_sec * NS_PER_S):
                return False
            self._last_ns[site] = now_ns
        if skip_first and site not in self._skipped:
            self._skipped.add(site)
            return False
        if once:
            if site in self._logged_once:
                return False
            self._logged_once.add(site)
        if severity in self._SHOWN:
            now_ns = self._seam.now_ns()
            print(f'[{severity}] [{now_ns // NS_PER_S}.{now_ns % NS_PER_S:09d}] '
                  f'[{name or self._seam.name}]: {message}', file=sys.stderr, flush=True)
        return True

    def debug(self, message: str, **kwargs: Any) -> bool:
        return self._log('DEBUG', message, **kwargs)

    def info(self, message: str, **kwargs: Any) -> bool:
        return self._log('INFO', message, **kwargs)

    def warning(self, message: str, **kwargs: Any) -> bool:
        return self._log('WARN', message, **kwargs)

    warn = warning

    def error(self, message: str, **kwargs: Any) -> bool:
        return self._log('ERROR', message, **kwargs)

    def fatal(self, message: str, **kwargs: Any) -> bool:
        return self._log('FATAL', message, **kwargs)


class LockstepSeam(NodeSeam):
    """A node's seam in a lock-step run (see the module documentation); made by
    :meth:`Lockstep.add`."""

    live = False

    def __init__(self, lockstep: Lockstep, name: str, namespace: str,
                 parameters: Mapping[str, Any]) -> None:
        self._lockstep = lockstep
        self._name, self._namespace = name, namespace or '/'
        self._parameters = dict(parameters)
        self._logger = _Logger(self)
        self.time_ns = 0  # the node's ROS time; the run's once the node is built
        self.subscriptions: list[_Subscription] = []
        self.timers: list[_Timer] = []
        self.time_callbacks: list[Callable[[], None]] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def logger(self) -> _Logger:
        return self._logger

    @property
    def use_sim_time(self) -> bool:
        return True

    def parameter_overrides(self) -> dict[str, Any]:
        return dict(self._parameters)

    def _resolve(self, topic: str) -> str:
        return resolve_topic(topic, self._namespace, self._name)

    def create_publisher(self, msg_type: type, topic: str, qos_profile: Any) -> _Publisher:
        _check_qos(qos_profile, f'{self._name}: publisher on {topic}')
        topic_name = self._resolve(topic)
        self._lockstep.offered_qos.setdefault(topic_name, []).append(qos_profile)
        self._lockstep.topic_types.setdefault(topic_name, msg_type)
        return _Publisher(self._lockstep, msg_type, topic_name)

    def create_subscription(self, msg_type: type, topic: str,
                            callback: Callable[[Any], None], qos_profile: Any) -> _Subscription:
        _check_callback(callback, f'{self._name}: subscription to {topic}', 1)
        _check_qos(qos_profile, f'{self._name}: subscription to {topic}')
        subscription = _Subscription(self._resolve(topic), msg_type, callback)
        self.subscriptions.append(subscription)
        self._lockstep._subscriptions_changed = True
        return subscription

    def destroy_subscription(self, subscription: _Subscription) -> None:
        """Stop ``subscription`` at once (the messages still pending are not given to it);
        one destroyed already is left as it is."""
        if subscription in self.subscriptions:
            self.subscriptions.remove(subscription)
            self._lockstep._unroute(subscription)

    def create_timer(self, period_s: float, callback: Callable[[], None]) -> _Timer:
        _check_callback(callback, f'{self._name}: timer', 0)
        timer = _Timer(int(float(period_s) * NS_PER_S), callback)  # as rclpy converts it
        if timer.timer_period_ns <= 0:
            raise ValueError(f'{self._name}: timer period {period_s!r} s must be positive')
        self.timers.append(timer)
        self._lockstep._timers_changed = True
        return timer

    def destroy_timer(self, timer: _Timer) -> None:
        """Stop ``timer`` at once (not called again, even at this event); one destroyed
        already is left as it is."""
        if timer in self.timers:
            self.timers.remove(timer)
            self._lockstep._undue(timer)

    def now_ns(self) -> int:
        return self.time_ns

    def on_time_change(self, callback: Callable[[], None]) -> Callable[[], None]:
        _check_callback(callback, f'{self._name}: time change callback', 0)
        self.time_callbacks.append(callback)
        return callback

    @property
    def rclpy_node(self) -> Any:
        raise NotServed(
            f'{self._name}: a headless (lock-step) run has no rclpy node: services, actions, '
            'clients, graph queries, steady-clock timers and live parameter changes are not '
            'served there (docs/architecture.md)')

    def destroy(self) -> None:
        self._lockstep._remove(self)


class Lockstep:
    """Nodes on lock-step seams, driven in simulated time from ``start_time_ns`` (see the
    module documentation); every message delivered is given to ``recorder`` first.

    ``offered_qos`` gets, per topic, the QoS profile of each publisher created on it (as given
    to ``create_publisher``: a ``QoSProfile`` or a depth), for a bag's metadata, and
    ``topic_types`` the message type of each topic published on (a bag records its topics
    whether or not a message comes); dicts of their own if not given.

    Who receives what is looked up in a topic -> (message type, callback) table, rebuilt only
    after a subscription was created or destroyed (checked before each batch of deliveries,
    not per message: a subscription created in a subscription callback receives messages from
    the next batch on, after the next timer or time-change callbacks); the timers are
    re-scanned only after one was created or destroyed (a timer created during an event is
    first due one period after that event).
    """

    def __init__(self, recorder: Recorder | None = None, start_time_ns: int = 0,
                 offered_qos: dict[str, list[Any]] | None = None,
                 topic_types: dict[str, type] | None = None) -> None:
        self._seams: list[LockstepSeam] = []
        self.offered_qos = {} if offered_qos is None else offered_qos
        self.topic_types = {} if topic_types is None else topic_types
        self._now_ns = _time_ns(start_time_ns, 'start_time_ns')
        self._recorder = recorder
        # (topic, id of the message, message), in publication order
        self._pending: collections.deque[tuple[str, int, Any]] = collections.deque()
        self._pending_keys: set[tuple[str, int]] = set()  # (topic, id) of those
        self._due_ns: dict[_Timer, int] = {}
        self._routes: dict[str, list[list[Any]]] = {}  # [message type, callback] per topic
        self._timers_changed = self._subscriptions_changed = True

    @property
    def now_ns(self) -> int:
        """Current simulated time [ns]."""
        return self._now_ns

    def add(self, node_class: Callable[[NodeSeam], Any], parameters: Mapping[str, Any],
            namespace: str = '/') -> Any:
        """Build ``node_class`` (named ``node_class.name``) on a new seam with the start-up
        ``parameters`` ({name: value}); drive it from now on. Returns the node."""
        seam = LockstepSeam(self, node_class.name, namespace, parameters)
        node = node_class(seam)
        self._seams.append(seam)
        seam.time_ns = self._now_ns
        for callback in list(seam.time_callbacks):  # its first time
            callback()
        self._timers_changed = self._subscriptions_changed = True
        return node

    def _remove(self, seam: LockstepSeam) -> None:
        if seam in self._seams:
            self._seams.remove(seam)
            for timer in seam.timers:
                self._undue(timer)
            for subscription in seam.subscriptions:
                self._unroute(subscription)

    def _undue(self, timer: _Timer) -> None:
        """A destroyed timer: out of the due times now (``run_until`` calls only those)."""
        self._due_ns.pop(timer, None)
        self._timers_changed = True

    def _unroute(self, subscription: _Subscription) -> None:
        """A destroyed subscription: out of the topic table now, in a new list; a delivery
        going through the old one finishes with it, without calling it."""
        routes = self._routes.get(subscription.topic_name)
        if routes is not None:
            self._routes[subscription.topic_name] = [
                route for route in routes if route is not subscription.route]
        subscription.route[1] = _not_called
        self._subscriptions_changed = True

    def run_until(self, end_ns: int, between: Callable[[int], None] | None = None) -> None:
        """Advance time event by event up to ``end_ns`` inclusive.

        ``between(now_ns)`` is called after each event settles (for progress display, pacing or
        stopping: raising from it stops the run cleanly between two events).
        """
        end_ns = _time_ns(end_ns, 'end_ns')
        self.deliver()
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
                return
            self._now_ns = next_ns
            self._set_clocks()
            if self._pending:
                self.deliver()
            for timer, due_ns in list(due.items()):
                if due_ns == next_ns and timer in due:  # (not destroyed meanwhile)
                    due[timer] = due_ns + timer.timer_period_ns
                    timer.callback()
                    if self._pending:
                        self.deliver()
            if between is not None:
                between(next_ns)

    def _set_clocks(self) -> None:
        """The event's time: every seam's ``now_ns()`` first, then (in node order) the time
        change callbacks of the seams whose time it changed."""
        now_ns, changed = self._now_ns, []
        for seam in self._seams:
            if seam.time_ns != now_ns:
                seam.time_ns = now_ns
                changed.append(seam)
        for seam in changed:
            for callback in seam.time_callbacks:
                callback()

    def _refresh_timers(self) -> None:
        """Track the timers created or destroyed since the last event (called when that flag
        is set): a new one is first due one period after now."""
        self._timers_changed = False
        current: dict[_Timer, int] = {}
        for seam in self._seams:
            for timer in seam.timers:
                due_ns = self._due_ns.get(timer)
                current[timer] = self._now_ns + timer.timer_period_ns if due_ns is None \
                    else due_ns
        self._due_ns = current

    def _refresh_routes(self) -> None:
        """Rebuild the topic -> subscriptions table if the subscriptions changed."""
        if not self._subscriptions_changed:
            return
        self._subscriptions_changed = False
        self._routes = {}
        for seam in self._seams:
            for subscription in seam.subscriptions:
                self._routes.setdefault(subscription.topic_name, []).append(subscription.route)

    def deliver(self) -> None:
        """Deliver every message pending now (run_until does it after each callback)."""
        if not self._pending:
            return
        self._refresh_routes()
        routes, recorder, pending = self._routes, self._recorder, self._pending
        pending_keys, now_ns = self._pending_keys, self._now_ns
        while pending:
            topic, msg_id, msg = pending.popleft()
            pending_keys.discard((topic, msg_id))
            if recorder is not None:
                recorder(topic, msg, now_ns)
            for msg_type, callback in routes.get(topic, ()):
                if isinstance(msg, msg_type):
                    callback(msg)
