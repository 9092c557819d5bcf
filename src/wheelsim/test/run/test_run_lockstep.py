"""Lock-step executor: exact event times, in-process delivery before time moves on, determinism."""

import time

import pytest
import rclpy
from rclpy.clock import Clock, ClockChange, ClockType, JumpHandle, JumpThreshold, ROSClock
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher
from rclpy.time import Time
from std_msgs.msg import String

from wheelsim.ros.clock import on_time_change
from wheelsim.run.lockstep import LockstepExecutor


class Talker(Node):
    """Publishes its ROS time every 20 ms, and once at construction."""

    def __init__(self, context):
        super().__init__('talker', context=context,
                         parameter_overrides=[Parameter('use_sim_time', value=True)])
        self.pub = self.create_publisher(String, 'chatter', 10)
        self.pub.publish(String(data='constructed'))
        self.create_timer(0.02, self.tick)

    def tick(self):
        self.pub.publish(String(data=str(self.get_clock().now().nanoseconds)))


class Echo(Node):
    """Answers every chatter message on `echo`; records what it saw and when (its ROS time)."""

    def __init__(self, context, log):
        super().__init__('echo', context=context,
                         parameter_overrides=[Parameter('use_sim_time', value=True)])
        self.log = log
        self.pub = self.create_publisher(String, 'echo', 10)
        self.create_subscription(String, 'chatter', self.on_chatter, 10)
        self.create_subscription(String, 'echo', self.on_echo, 10)
        self.create_timer(0.05, lambda: self.log.append(('tick50', self.now())))

    def now(self):
        return self.get_clock().now().nanoseconds

    def on_chatter(self, msg):
        self.log.append(('chatter', msg.data, self.now()))
        self.pub.publish(String(data='re:' + msg.data))

    def on_echo(self, msg):
        self.log.append(('echo', msg.data, self.now()))


@pytest.fixture
def context(ros_domain_id):
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=ros_domain_id)
    yield ctx
    rclpy.try_shutdown(context=ctx)


def run(context, end_ns):
    log, recorded = [], []

    def record(topic, msg, time_ns):
        if isinstance(msg, String):  # nodes also publish /parameter_events
            recorded.append((topic, msg.data, time_ns))

    with LockstepExecutor(record) as ex:
        ex.add_node(Talker(context))
        ex.add_node(Echo(context, log))
        ex.run_until(end_ns)
        assert ex.now_ns == end_ns
    return log, recorded


def test_events_at_exact_times_and_messages_handled_before_time_moves(context):
    log, recorded = run(context, 100_000_000)
    assert log[:2] == [('chatter', 'constructed', 0), ('echo', 're:constructed', 0)]
    chatter_times = [entry[2] for entry in log if entry[0] == 'chatter'][1:]
    assert chatter_times == [20_000_000 * k for k in range(1, 6)]
    # Every message published at time t was handled at time t, replies included.
    for entry in log:
        if entry[0] in ('chatter', 'echo') and entry[1].lstrip('re:') != 'constructed':
            assert int(entry[1].removeprefix('re:')) == entry[2]
    assert [e for e in log if e[0] == 'tick50'] == [('tick50', 50_000_000), ('tick50', 100_000_000)]
    assert ('/chatter', '20000000', 20_000_000) in recorded
    assert ('/echo', 're:20000000', 20_000_000) in recorded


def test_same_inputs_give_identical_sequences(context):
    assert run(context, 200_000_000) == run(context, 200_000_000)


def test_publish_is_restored_and_stop_from_between(context):
    original = Publisher.publish
    with LockstepExecutor() as ex:
        ex.add_node(Talker(context))

        def stop_at_60ms(now_ns):
            if now_ns >= 60_000_000:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            ex.run_until(1_000_000_000, between=stop_at_60ms)
        assert ex.now_ns == 60_000_000
    assert Publisher.publish is original


def test_clock_now_answers_the_event_time_and_is_restored(context):
    original = Clock.now
    other = Clock(clock_type=ClockType.STEADY_TIME)
    with LockstepExecutor(start_time_ns=5) as ex:
        talker = Talker(context)
        assert talker.get_clock().now().nanoseconds == 0  # not driven yet: rcl's answer
        ex.add_node(talker)
        seen = []
        ex.run_until(70_000_000, between=lambda now_ns: seen.append(
            (now_ns, talker.get_clock().now().nanoseconds,
             talker.get_clock().now().clock_type)))
        assert seen == [(5 + k * 20_000_000, 5 + k * 20_000_000, ClockType.ROS_TIME)
                        for k in (1, 2, 3)]
        before, after = time.monotonic_ns(), other.now().nanoseconds
        assert before <= after <= time.monotonic_ns()  # other clocks ask rcl as before
    assert Clock.now is original
    assert talker.get_clock().now().nanoseconds == 70_000_000  # rcl was set all along


def test_rejects_node_without_sim_time(context):
    node = Node('wall', context=context)
    with LockstepExecutor() as ex, pytest.raises(ValueError, match='use_sim_time'):
        ex.add_node(node)


def test_subscriptions_and_timers_added_or_removed_during_a_run(context):
    log = []
    with LockstepExecutor() as ex:
        talker = Talker(context)
        listener = Node('listener', context=context,
                        parameter_overrides=[Parameter('use_sim_time', value=True)])
        ex.add_node(talker)
        ex.add_node(listener)
        ex.run_until(40_000_000)
        # Created between two events: delivered from the next event on.
        subscription = listener.create_subscription(
            String, 'chatter', lambda msg: log.append(('chatter', msg.data)), 10)
        timer = listener.create_timer(0.03, lambda: log.append(('timer', ex.now_ns)))
        ex.run_until(100_000_000)
        listener.destroy_subscription(subscription)
        timer.cancel()
        ex.run_until(200_000_000)
    assert log == [('chatter', '60000000'), ('timer', 70_000_000), ('chatter', '80000000'),
                   ('chatter', '100000000'), ('timer', 100_000_000)]


def test_a_new_timer_period_applies_from_the_next_event_on(context):
    log = []
    with LockstepExecutor() as ex:
        node = Node('ticker', context=context,
                    parameter_overrides=[Parameter('use_sim_time', value=True)])
        ex.add_node(node)
        timer = node.create_timer(0.03, lambda: log.append(ex.now_ns))
        ex.run_until(60_000_000)
        timer.timer_period_ns = 50_000_000
        ex.run_until(200_000_000)
    assert log == [30_000_000, 60_000_000, 90_000_000, 140_000_000, 190_000_000]


class ClockWatcher(Node):
    """Publishes the new time from a clock-change callback (as vehicle_sim does) and logs
    what its 20 ms timer and its subscription see."""

    def __init__(self, context, log, publishes_per_change=1):
        super().__init__('watcher', context=context,
                         parameter_overrides=[Parameter('use_sim_time', value=True)])
        self.log = log
        self.msg = String()  # one object, filled again for every publication
        self.publishes_per_change = publishes_per_change
        self.pub = self.create_publisher(String, 'time', 10)
        self.create_subscription(String, 'time', lambda m: log.append(('time', m.data)), 10)
        self.create_timer(0.02, lambda: log.append(('timer', self.now())))
        self.jump_handle = on_time_change(self, self.on_change)

    def now(self):
        return self.get_clock().now().nanoseconds

    def on_change(self):
        for _ in range(self.publishes_per_change):
            self.msg.data = str(self.now())
            self.pub.publish(self.msg)


def test_clock_change_messages_are_delivered_before_the_timers_of_that_time(context):
    log = []
    with LockstepExecutor(start_time_ns=1) as ex:
        ex.add_node(ClockWatcher(context, log))
        ex.run_until(40_000_001)
    assert log == [('time', '1'),
                   ('time', '20000001'), ('timer', 20_000_001),
                   ('time', '40000001'), ('timer', 40_000_001)]


def test_refilling_a_message_still_pending_is_an_error(context):
    message = '/time was published again before it was delivered'
    with LockstepExecutor(start_time_ns=1) as ex, pytest.raises(RuntimeError, match=message):
        ex.add_node(ClockWatcher(context, [], publishes_per_change=2))
        ex.run_until(20_000_001)


def test_jump_callbacks_of_a_node_built_before_the_executor_opened_still_run(context):
    log = []
    watcher = ClockWatcher(context, log)  # its jump callback was registered unseen
    with LockstepExecutor(start_time_ns=1) as ex:
        ex.add_node(watcher)
        ex.run_until(40_000_001)
    assert log == [('time', '1'),
                   ('time', '20000001'), ('timer', 20_000_001),
                   ('time', '40000001'), ('timer', 40_000_001)]


class LateWatcher(Node):
    """Registers a jump callback (rclpy's, which reports the jump) at its first timer call and
    logs every jump it then sees."""

    def __init__(self, context, log):
        super().__init__('late', context=context,
                         parameter_overrides=[Parameter('use_sim_time', value=True)])
        self.log, self.jump_handle = log, None
        self.create_timer(0.02, self.tick)

    def tick(self):
        if self.jump_handle is None:
            threshold = JumpThreshold(min_forward=Duration(nanoseconds=1), min_backward=None)
            self.jump_handle = self.get_clock().create_jump_callback(
                threshold, post_callback=lambda jump: self.log.append(
                    (self.get_clock().now().nanoseconds, jump.delta.nanoseconds)))


def test_a_jump_callback_registered_during_a_run_sees_each_event_once(context):
    """The clock of a node without jump callbacks is not set at every event; one registered
    later must still see each event's own jump, not one from a stale rcl time."""
    log = []
    with LockstepExecutor(start_time_ns=1) as ex:
        late = LateWatcher(context, log)
        ex.add_node(late)
        ex.run_until(60_000_001)
        late.jump_handle.unregister()
        ex.run_until(100_000_001)
    assert log == [(40_000_001, 20_000_000), (60_000_001, 20_000_000)]


class JumpLogger(Node):
    """Timers every 20 and 50 ms (so jumps of 10 and 20 ms), and jump callbacks of several
    thresholds registered directly (rcl's dictionary) and through rclpy (a ``TimeJump``), each
    logging what it is given and rcl's view through ``now()``."""

    def __init__(self, context, log):
        super().__init__('jumps', context=context,
                         parameter_overrides=[Parameter('use_sim_time', value=True)])
        self.create_timer(0.02, lambda: log.append(('timer20', self.now())))
        self.create_timer(0.05, lambda: log.append(('timer50', self.now())))
        clock = self.get_clock()

        def threshold(forward_ns, backward_ns):
            return JumpThreshold(
                min_forward=None if forward_ns is None else Duration(nanoseconds=forward_ns),
                min_backward=None if backward_ns is None else Duration(nanoseconds=backward_ns),
                on_clock_change=False)

        self.handles = [
            JumpHandle(clock=clock, threshold=threshold(1, -1),
                       pre_callback=lambda: log.append(('pre any', self.now())),
                       post_callback=lambda jump: log.append(
                           ('post any', self.now(), jump['delta'],
                            jump['clock_change'] == ClockChange.ROS_TIME_NO_CHANGE))),
            JumpHandle(clock=clock, threshold=threshold(15_000_000, None), pre_callback=None,
                       post_callback=lambda jump: log.append(
                           ('post >= 15 ms', self.now(), jump['delta']))),
            clock.create_jump_callback(
                threshold(20_000_000, None),
                pre_callback=lambda: log.append(('pre >= 20 ms', self.now())),
                post_callback=lambda jump: log.append(
                    ('post >= 20 ms', self.now(), jump.delta.nanoseconds,
                     jump.clock_change == ClockChange.ROS_TIME_NO_CHANGE))),
            JumpHandle(clock=clock, threshold=threshold(None, -1),
                       pre_callback=lambda: log.append(('pre backward', self.now())),
                       post_callback=None),
        ]

    def now(self):
        return self.get_clock().now().nanoseconds


def test_the_executor_calls_jump_callbacks_as_rcl_does(context):
    """A node built before the executor opened has its jump callbacks run by rcl (its clock's
    rcl time set at every event); one built inside has them called by the executor: both must
    see the same calls, in the same order, with the same arguments."""
    by_rcl, by_executor = [], []
    before = JumpLogger(context, by_rcl)
    with LockstepExecutor(start_time_ns=1) as ex:
        ex.add_node(before)
        ex.run_until(100_000_001)
    with LockstepExecutor(start_time_ns=1) as ex:
        ex.add_node(JumpLogger(context, by_executor))
        ex.run_until(100_000_001)
    assert ('post >= 15 ms', 20_000_001, 20_000_000) in by_rcl
    assert ('post any', 50_000_001, 10_000_000, True) in by_rcl
    assert ('post >= 15 ms', 50_000_001, 10_000_000) not in by_rcl
    assert not any(entry[0] == 'pre backward' for entry in by_rcl)
    assert by_executor == by_rcl


def test_rcl_time_of_a_clock_whose_callbacks_the_executor_calls_is_set_outside_events(
        context, monkeypatch):
    set_times = []
    original = ROSClock.set_ros_time_override

    def counting(clock, time_):
        set_times.append((clock, time_.nanoseconds))
        original(clock, time_)

    monkeypatch.setattr(ROSClock, 'set_ros_time_override', counting)
    log = []
    with LockstepExecutor(start_time_ns=1) as ex:
        talker, watcher = Talker(context), ClockWatcher(context, log)
        ex.add_node(talker)
        ex.add_node(watcher)
        set_times.clear()
        ex.run_until(40_000_001)
        in_run = list(set_times)
        log.append('run ended')
        ex.run_until(40_000_001)  # rcl's time set again: no jump callback may run again
    talker_clock, watcher_clock = talker.get_clock(), watcher.get_clock()
    assert [t for c, t in in_run if c is watcher_clock] == [40_000_001]  # at the run's end only
    assert [t for c, t in in_run if c is talker_clock] == [40_000_001]
    assert log[-2:] == [('timer', 40_000_001), 'run ended']
    assert talker_clock.now().nanoseconds == 40_000_001  # rcl's time after the executor closed
    assert watcher_clock.now().nanoseconds == 40_000_001


def test_jump_callbacks_registered_while_open_run_on_rcl_s_jumps_after_it_closed(context):
    log = []
    with LockstepExecutor(start_time_ns=1) as ex:
        node = JumpLogger(context, log)
        ex.add_node(node)
        ex.run_until(20_000_001)
    log.clear()
    node.get_clock().set_ros_time_override(Time(nanoseconds=30_000_001,
                                                clock_type=ClockType.ROS_TIME))
    assert log == [('pre any', 20_000_001), ('post any', 30_000_001, 10_000_000, True)]


def test_a_jump_handle_refuses_what_is_not_callable_while_the_executor_is_open(context):
    with LockstepExecutor(start_time_ns=1) as ex:
        node = JumpLogger(context, [])
        ex.add_node(node)
        with pytest.raises(ValueError, match='post_callback must be callable'):
            JumpHandle(clock=node.get_clock(),
                       threshold=JumpThreshold(min_forward=None, min_backward=None),
                       pre_callback=None, post_callback='not callable')


def test_the_time_a_driven_clock_gives_is_an_rclpy_time_in_every_respect(context):
    """now() during a run answers the event's time without building rcl's time point; what
    rclpy does with a Time (compare, convert, add, set a clock) still works, as with a Time
    built by rclpy."""
    with LockstepExecutor(start_time_ns=1_000_000_000) as ex:
        node = Talker(context)
        ex.add_node(node)
        ex.run_until(1_020_000_000)
        now = node.get_clock().now()
        assert type(now) is not Time  # the executor's
    same = Time(nanoseconds=1_020_000_000, clock_type=ClockType.ROS_TIME)
    assert isinstance(now, Time)
    assert now.nanoseconds == 1_020_000_000
    assert now.clock_type == same.clock_type
    assert now == same and not now < same and now <= same
    assert now.to_msg() == same.to_msg()
    assert now.seconds_nanoseconds() == (1, 20_000_000)
    assert (now + Duration(seconds=0.5)).nanoseconds == 1_520_000_000
    assert now - same == Duration()
    with pytest.raises(TypeError):
        now < Time(nanoseconds=1, clock_type=ClockType.SYSTEM_TIME)  # noqa: B015
    # Closing, the executor set the clock's rcl time from it (rclpy hands rcl its time point,
    # built on demand): rcl answers now() again, with the same time.
    assert node.get_clock().now() == same
    node.destroy_node()


@pytest.mark.parametrize('start_ns, end_ns, name', [
    (-5, 10, 'start_time_ns'), (2**63, 10, 'start_time_ns'), (0, 1.5e9, 'end_ns'),
    (0, True, 'end_ns'), (0, 2**63, 'end_ns'),
])
def test_a_time_rclpy_would_refuse_is_refused_with_its_name(context, start_ns, end_ns, name):
    """The executor's times become the nodes' Time: integers in [0, 2**63) ns, as rclpy's Time
    requires (a float or an out-of-range value would reach the nodes' messages)."""
    with pytest.raises(ValueError, match=rf'{name} = .* must be an integer time in \[0, 2\*\*63\)'):
        with LockstepExecutor(start_time_ns=start_ns) as ex:
            node = Talker(context)
            ex.add_node(node)
            try:
                ex.run_until(end_ns)
            finally:
                node.destroy_node()
