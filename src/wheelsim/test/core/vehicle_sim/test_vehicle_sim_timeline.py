"""The step grid and event schedule of vehicle_sim (``core.vehicle_sim.timeline``), without ROS."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wheelsim.core.units import NS_PER_S
from wheelsim.core.vehicle_sim.config import VehicleSimSettings
from wheelsim.core.vehicle_sim.timeline import Event, JumpKind, Pacer, Timeline


def drain(timeline, target_ns):
    """Run to ``target_ns``; return [(step, time_ns, event)] and the number of steps taken."""
    events, steps = [], 0
    for n_steps, event in timeline.run(target_ns):
        assert n_steps >= 0
        steps += n_steps
        if event is not None:
            events.append((timeline.step, timeline.now_ns, event))
    return events, steps


@pytest.mark.parametrize('step_rate', [300.0, 400.0, 1000.0, 2000.0, 2500.0])
def test_publish_times_are_exact_multiples_of_the_period(step_rate):
    timeline = Timeline(step_rate, origin_ns=7 * NS_PER_S)
    timeline.set_rate(Event.PUBLISH, 50.0)
    events, steps = drain(timeline, 7 * NS_PER_S + 10 * NS_PER_S)
    times = [t for _, t, _ in events]
    assert times == [7 * NS_PER_S + j * 20_000_000 for j in range(1, 501)]
    assert steps == round(10 * step_rate)  # the right speed: 10 s of steps in 10 s


@given(
    st.integers(1, 100_000).map(float),
    st.integers(-(10**15), 10**15),
    st.integers(0, 10**12),
)
def test_last_step_at_inverts_time_ns(step_rate, origin_ns, elapsed_ns):
    timeline = Timeline(step_rate, origin_ns)
    k = timeline.last_step_at(origin_ns + elapsed_ns)
    assert timeline.time_ns(k) <= origin_ns + elapsed_ns < timeline.time_ns(k + 1)


def test_step_times_of_an_irrational_looking_rate_are_exact():
    timeline = Timeline(300.0)
    # 1/300 s is not a whole number of nanoseconds; step 300 is still exactly 1 s.
    assert timeline.time_ns(1) == 3_333_333
    assert timeline.time_ns(300) == NS_PER_S
    assert timeline.time_ns(300 * 86_400 * 365) == 86_400 * 365 * NS_PER_S


def test_non_integer_ratio_publishes_at_the_last_step_before_each_period():
    timeline = Timeline(1000.0)
    timeline.set_rate(Event.PUBLISH, 30.0)
    events, _ = drain(timeline, NS_PER_S)
    steps = [s for s, _, _ in events]
    assert steps == [int(Fraction(1000, 30) * j) for j in range(1, 31)]
    assert steps[-1] == 1000


def test_batches_between_events_cover_every_step_once():
    timeline = Timeline(1000.0)
    timeline.set_rate(Event.PUBLISH, 50.0)
    timeline.set_rate(Event.CLOCK, 100.0)
    pairs = list(timeline.run(55_500_000))
    assert [n for n, _ in pairs] == [10, 10, 0, 10, 10, 0, 10, 5]
    assert [e for _, e in pairs] == [
        Event.CLOCK, Event.PUBLISH, Event.CLOCK, Event.CLOCK, Event.PUBLISH, Event.CLOCK,
        Event.CLOCK, None,
    ]
    assert timeline.step == 55


def test_deadline_fires_at_the_first_step_strictly_later():
    timeline = Timeline(1000.0)
    timeline.set_deadline(20_000_000)  # exactly step 20: stale from step 21 on
    events, _ = drain(timeline, 100_000_000)
    assert events == [(21, 21_000_000, Event.EXPIRE)]
    timeline.set_deadline(50_000_000)  # already past: fires without stepping
    assert list(timeline.run(100_000_000)) == [(0, Event.EXPIRE)]


def test_next_time_of_a_periodic_event():
    timeline = Timeline(300.0, origin_ns=NS_PER_S)
    assert timeline.next_time_ns(Event.PUBLISH) is None
    timeline.set_rate(Event.PUBLISH, 50.0)
    drain(timeline, NS_PER_S + 25_000_000)
    assert timeline.next_time_ns(Event.PUBLISH) == NS_PER_S + 40_000_000


def test_rate_change_reanchors_at_the_current_step():
    timeline = Timeline(1000.0)
    timeline.set_rate(Event.PUBLISH, 50.0)
    drain(timeline, 30_000_000)
    timeline.set_rate(Event.PUBLISH, 10.0)
    events, _ = drain(timeline, 300_000_000)
    assert [s for s, _, _ in events] == [130, 230]


def test_stopping_early_leaves_a_consistent_state():
    timeline = Timeline(1000.0)
    timeline.set_rate(Event.CLOCK, 100.0)
    for _n_steps, event in timeline.run(NS_PER_S):
        if event is Event.CLOCK:
            break
    assert timeline.step == 10
    events, steps = drain(timeline, NS_PER_S)
    assert steps == 990 and len(events) == 99


def test_classify_jumps():
    timeline = Timeline(1000.0, origin_ns=5 * NS_PER_S)
    drain(timeline, 6 * NS_PER_S)
    assert timeline.classify(6 * NS_PER_S, NS_PER_S) is JumpKind.NORMAL
    assert timeline.classify(7 * NS_PER_S, NS_PER_S) is JumpKind.NORMAL
    assert timeline.classify(7 * NS_PER_S + 1, NS_PER_S) is JumpKind.FORWARD
    assert timeline.classify(6 * NS_PER_S - 1, NS_PER_S) is JumpKind.BACKWARD


def test_the_largest_stepped_clock_advance_is_max_time_jump_beyond_a_publish_period():
    assert VehicleSimSettings().max_gap_ns == NS_PER_S + 20_000_000  # 1 s + 1 / (50 Hz)
    assert VehicleSimSettings(max_time_jump=0.5, pub_rate=100.0).max_gap_ns == 510_000_000
    assert VehicleSimSettings(max_time_jump=1e-9, pub_rate=1000.0).max_gap_ns == 1_000_001


def test_pacer_follows_the_factor_and_restarts_when_far_behind():
    pacer = Pacer(10.0, max_lag_s=0.1)
    pacer.restart(sim_ns=0, wall_ns=1_000 * NS_PER_S)
    assert pacer.target_ns(0, 1_000 * NS_PER_S + 50_000_000) == 500_000_000
    # 1 s of wall time later the simulation is still at 0.5 s: far behind, so restart.
    target = pacer.target_ns(500_000_000, 1_001 * NS_PER_S)
    assert target == 500_000_000 + 1_000_000_000  # at most max_lag_s of wall time to catch up
    assert pacer.lag_restarts == 1
    assert pacer.wall_time_ns(500_000_000 + 2_000_000_000) == 1_001 * NS_PER_S + 100_000_000
    assert Pacer(0.0).target_ns(0, 0) is None
    assert Pacer(0.0).wall_time_ns(10**9) is None
