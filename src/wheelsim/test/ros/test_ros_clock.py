"""wheelsim.ros.clock helpers: periodic jobs on one ticker, reading the node's ROS time."""

import pytest
import rclpy
from rclpy.parameter import Parameter

from wheelsim.ros.clock import ClockMode, PeriodicCalls, ros_time_reader
from wheelsim.ros.seam import LiveSeam


class FakeTime:
    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


def test_periodic_calls_run_each_job_at_its_own_period_and_say_when_next():
    clock, calls = FakeTime(), []
    jobs = PeriodicCalls(
        [(1.0, lambda: calls.append('slow')), (0.25, lambda: calls.append('fast'))],
        on_error=pytest.fail, clock_s=clock,
    )
    assert jobs.tick() == 0.25 and calls == []
    for step in range(1, 9):
        clock.now_s = 100.0 + 0.25 * step
        delay_s = jobs.tick()
        assert delay_s == 0.25
    assert calls.count('fast') == 8 and calls.count('slow') == 2
    assert calls[3:5] == ['slow', 'fast']  # both due at 101 s: in the order given


def test_a_job_that_fell_behind_runs_once_then_keeps_its_period_from_now():
    clock, calls = FakeTime(), []
    jobs = PeriodicCalls(
        [(0.5, lambda: calls.append(clock.now_s))], on_error=pytest.fail, clock_s=clock
    )
    clock.now_s = 103.2  # 6 periods late
    assert jobs.tick() == 0.5
    assert jobs.tick() == 0.5 and calls == [103.2]
    clock.now_s = 103.7
    jobs.tick()
    assert calls == [103.2, 103.7]


def test_a_failing_job_is_reported_and_the_others_still_run():
    clock, calls, errors = FakeTime(), [], []

    def broken() -> None:
        raise RuntimeError('diagnostics broke')

    jobs = PeriodicCalls(
        [(0.25, broken), (0.25, lambda: calls.append(clock.now_s))], errors.append, clock
    )
    for step in (1, 2):
        clock.now_s = 100.0 + 0.25 * step
        assert jobs.tick() == 0.25
    assert calls == [100.25, 100.5]
    assert [str(err) for err in errors] == ['diagnostics broke'] * 2


def test_wall_clock_reader_is_the_nodes_ros_time(ros_domain_id):
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        wall = LiveSeam('wall', context=context)
        follow = LiveSeam('follow', context=context,
                          parameter_overrides=[Parameter('use_sim_time', value=True)])
        read_wall = ros_time_reader(wall, ClockMode.WALL)
        before = wall.now_ns()
        now_ns = read_wall()
        after = wall.now_ns()
        assert before <= now_ns <= after
        assert ros_time_reader(follow, ClockMode.FOLLOW)() == 0  # no /clock yet
    finally:
        rclpy.try_shutdown(context=context)
