"""The age of vehicle_sim's held command (wheelsim.core.vehicle_sim.command), without ROS."""

from wheelsim.core.units import NS_PER_S
from wheelsim.core.vehicle_sim.command import CommandAge


def test_twist_counts_from_arrival_and_stamped_from_its_stamp():
    age = CommandAge(max_oldness_s=1.0)
    assert age.receive(now_ns=5 * NS_PER_S, stamp_ns=None)
    assert age.deadline_ns() == 6 * NS_PER_S
    assert age.receive(now_ns=5 * NS_PER_S, stamp_ns=4_500_000_000)
    assert age.deadline_ns() == 5_500_000_000
    assert age.age_s(5 * NS_PER_S) == 0.5


def test_a_command_older_than_the_limit_is_stale_on_arrival():
    age = CommandAge(max_oldness_s=1.0)
    assert age.receive(now_ns=5 * NS_PER_S, stamp_ns=4 * NS_PER_S)  # exactly 1 s: still fresh
    assert not age.receive(now_ns=5 * NS_PER_S, stamp_ns=4 * NS_PER_S - 1)
    assert age.age_s(5 * NS_PER_S) > 1.0


def test_future_stamps_count_from_arrival_and_zero_means_never_stale():
    age = CommandAge(max_oldness_s=1.0)
    assert age.receive(now_ns=5 * NS_PER_S, stamp_ns=9 * NS_PER_S)
    assert age.deadline_ns() == 6 * NS_PER_S
    never = CommandAge(max_oldness_s=0.0)
    assert never.receive(now_ns=5 * NS_PER_S, stamp_ns=0)
    assert never.deadline_ns() is None


def test_clear_forgets_the_command():
    age = CommandAge(max_oldness_s=1.0)
    age.receive(now_ns=NS_PER_S, stamp_ns=None)
    age.clear()
    assert age.deadline_ns() is None and age.age_s(10 * NS_PER_S) == 0.0
