"""Lock-step executor: exact event times, in-process delivery before time moves on, determinism."""

import time

import pytest
import rclpy
from rclpy.clock import Clock, ClockType, JumpThreshold, ROSClock
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher
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


def test_each_event_sets_only_the_clocks_with_jump_callbacks(context, monkeypatch):
    set_times = []
    original = ROSClock.set_ros_time_override

    def counting(clock, time_):
        set_times.append((clock, time_.nanoseconds))
        original(clock, time_)

    monkeypatch.setattr(ROSClock, 'set_ros_time_override', counting)
    with LockstepExecutor(start_time_ns=1) as ex:
        talker, watcher = Talker(context), ClockWatcher(context, [])
        ex.add_node(talker)
        ex.add_node(watcher)
        set_times.clear()
        ex.run_until(40_000_001)
        in_run = list(set_times)
    talker_clock, watcher_clock = talker.get_clock(), watcher.get_clock()
    assert [t for c, t in in_run if c is watcher_clock][:2] == [20_000_001, 40_000_001]
    assert [t for c, t in in_run if c is talker_clock] == [40_000_001]  # at the run's end only
    assert talker_clock.now().nanoseconds == 40_000_001  # rcl's time after the executor closed
