"""No message kills a node: random and adversarial messages on every topic any node subscribes.

The four nodes run as processes on a clock the test publishes (use_sim_time), so /clock is
fuzzed too. For 8 s a seeded fuzzer sends messages whose numbers are NaN, +-inf, +-1e308, 0 or
ordinary, with negative, huge and non-normalised stamps, empty, odd and long frame names, zero
and non-unit quaternions, and empty or long arrays (paths of 20 000 poses, 500 transforms).
Then: every node is alive, what the nodes published is finite, their logs stayed short
(throttled), and once the fuzzing stops they go on working (fresh, finite outputs). The seed is
the test's ROS domain ID: ``WHEELSIM_ROS_DOMAIN_IDS=<id>`` replays a failure's message sequence
(its timing, and so which messages interleave with the clock, varies).
"""

from __future__ import annotations

import math
import random
import time

import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import (
    PoseStamped,
    PoseWithCovarianceStamped,
    Quaternion,
    TransformStamped,
    TwistStamped,
    Vector3Stamped,
)
from nav_msgs.msg import Odometry, Path
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState, Joy
from std_msgs.msg import Float64MultiArray
from tf2_msgs.msg import TFMessage

from wheelsim.ros import qos
from wheelsim.ros.conversions import clock_msg
from wheelsim.ros.static_frames import STATIC_TF_QOS
from wheelsim.testing.processes import NodeProcess, Probe

FUZZ_S = 8.0
NUMBERS = [math.nan, math.inf, -math.inf, 1e308, -1e308, 1e154, 0.0, -0.0, 5e-324, 1.0, -3.5]
FRAMES = ['', 'map', '/map', 'odom', 'base_link', 'robot1/map', 'x' * 300, 'm a p']
SECONDS = [-1, -2**31, 0, 1, 2**31 - 1]
NANOSECONDS = [0, 999_999_999, 2**32 - 1]
QUATERNIONS = [(0, 0, 0, 0), (0, 0, 3, 4), (0, 0, 0, 1), (math.nan, 0, 0, 1), (1e308, 0, 0, 1),
               (0.5, 0.5, 0.5, 0.5)]
NODES = {
    'vehicle_sim': {'model': 'differential', 'cmd_vel_type': 'twist_stamped'},
    'localization': {'mode': 'ekf'},
    'planner': {'waypoints': [2.0, 0.0, math.nan, 2.0, 2.0, math.nan]},
    'controller': {'model': 'differential'},
    'wheel_teleop': {'enable_button': 2},
}
#: Topics only the nodes publish: every message on them must be finite, also while fuzzing.
OUTPUTS = {'twist_actual': TwistStamped, 'joint_states': JointState, '/tf': TFMessage,
           'tracking_error': Vector3Stamped}
#: Topics the nodes publish and the fuzzer sends on too: checked once the fuzzing stopped.
SHARED = {'ground_truth': Odometry, 'odom': Odometry, 'pose': PoseWithCovarianceStamped,
          'cmd_vel': TwistStamped}


def fill(msg, rng: random.Random):
    """Fill every field of ``msg`` with an adversarial or ordinary value (recursively)."""
    for name, kind in msg.get_fields_and_field_types().items():
        value = getattr(msg, name)
        if isinstance(value, Time):
            value.sec, value.nanosec = rng.choice(SECONDS), rng.choice(NANOSECONDS)
        elif isinstance(value, Quaternion):
            value.x, value.y, value.z, value.w = (float(v) for v in rng.choice(QUATERNIONS))
        elif kind == 'string':
            setattr(msg, name, rng.choice(FRAMES))
        elif kind in ('double', 'float'):
            setattr(msg, name, rng.choice(NUMBERS))
        elif kind.startswith('double[') or kind.startswith('float['):
            setattr(msg, name, [rng.choice(NUMBERS) for _ in range(len(value))])
        elif hasattr(value, 'get_fields_and_field_types'):
            fill(value, rng)
    return msg


def fuzzed(kind, rng: random.Random):
    """One adversarial message of type ``kind`` (with long or empty arrays where it has one)."""
    if kind is Path:
        msg = fill(Path(), rng)
        count = rng.choice([0, 1, 2, 50, 20_000])
        template = fill(PoseStamped(), rng)
        msg.poses = [template] * count if rng.random() < 0.5 else [
            fill(PoseStamped(), rng) for _ in range(min(count, 200))]
        return msg
    if kind is TFMessage:
        return TFMessage(transforms=[fill(TransformStamped(), rng)
                                     for _ in range(rng.choice([0, 1, 5, 500]))])
    if kind is Clock:
        return Clock(clock=Time(sec=rng.choice(SECONDS), nanosec=rng.choice(NANOSECONDS)))
    if kind is Float64MultiArray:  # wheel_commands: the right length (2) or not
        return Float64MultiArray(data=[rng.choice(NUMBERS)
                                       for _ in range(rng.choice([0, 2, 2, 4, 1000]))])
    if kind is Joy:
        singles = [v for v in NUMBERS if not math.isfinite(v) or abs(v) < 3e38]  # float32
        return Joy(axes=[rng.choice(singles) for _ in range(rng.choice([0, 2, 5, 8]))],
                   buttons=[rng.choice([0, 1, -1, 2**31 - 1]) for _ in range(rng.choice([0, 3]))])
    return fill(kind(), rng)


def non_finite(msg) -> bool:
    """Whether any float anywhere in ``msg`` is NaN or infinite."""
    for name, kind in msg.get_fields_and_field_types().items():
        value = getattr(msg, name)
        if kind in ('double', 'float'):
            if not math.isfinite(value):
                return True
        elif kind.startswith(('double[', 'float[', 'sequence<double', 'sequence<float')):
            if not all(math.isfinite(v) for v in value):
                return True
        elif kind.startswith('sequence<') and value and hasattr(value[0], 'get_fields_and_'
                                                                'field_types'):
            if any(non_finite(item) for item in value):
                return True
        elif hasattr(value, 'get_fields_and_field_types') and non_finite(value):
            return True
    return False


@pytest.mark.early
def test_no_message_kills_a_node(ros_domain_id):
    rng = random.Random(f'fuzz-{ros_domain_id}')
    # Shown with a failure: WHEELSIM_ROS_DOMAIN_IDS=<id> replays the same messages.
    print(f'fuzz seed: domain {ros_domain_id}')
    probe = Probe(use_sim_time=False)
    nodes = {name: NodeProcess(f'wheelsim.nodes.{name}', {**params, 'use_sim_time': True})
             for name, params in NODES.items()}
    try:
        clock = probe.publisher(Clock, '/clock', qos.CLOCK_PUBLISHER)
        now_ns = 1_000_000_000
        received = {topic: probe.record(kind, topic)
                    for topic, kind in {**OUTPUTS, **SHARED}.items()}

        def tick(steps: int = 1) -> None:
            nonlocal now_ns
            for _ in range(steps):
                now_ns += 10_000_000
                clock.publish(clock_msg(now_ns))
                probe.spin_for(0.01)

        deadline = time.monotonic() + 40
        while not all(received[t] for t in ('twist_actual', 'odom', 'pose')):
            assert time.monotonic() < deadline, {n: p.output()[-500:] for n, p in nodes.items()}
            tick()
        targets = {
            'cmd_vel': TwistStamped, 'initialpose': PoseWithCovarianceStamped,
            'ground_truth': Odometry, 'pose': PoseWithCovarianceStamped, 'goal_pose': PoseStamped,
            'plan': Path, 'odom': Odometry, '/clock': Clock,
            'wheel_commands': Float64MultiArray, 'joy': Joy,
        }
        publishers = {topic: probe.publisher(kind, topic) for topic, kind in targets.items()}
        publishers['/tf_static'] = probe.publisher(TFMessage, '/tf_static', STATIC_TF_QOS)
        targets['/tf_static'] = TFMessage
        probe.spin_for(0.5)
        counts = {topic: len(messages) for topic, messages in received.items()}
        sent = 0
        end = time.monotonic() + FUZZ_S
        while time.monotonic() < end:
            topic = rng.choice(list(targets))
            publishers[topic].publish(fuzzed(targets[topic], rng))
            sent += 1
            if sent % 5 == 0:
                tick()
        dead = {name: node.process.poll() for name, node in nodes.items()
                if node.process.poll() is not None}
        assert not dead, {n: nodes[n].output()[-3000:] for n in dead}
        for topic in OUTPUTS:
            bad = [m for m in received[topic][counts[topic]:] if non_finite(m)]
            assert not bad, f'{topic}: {len(bad)} non-finite messages, e.g. {bad[0]}'

        # The fuzzing stopped: a clock running on from a fresh time, and the nodes go on. What
        # the nodes publish now is stamped in that fresh window (fuzzed messages still arriving
        # on the shared topics carry other stamps).
        now_ns += 100 * 1_000_000_000
        fresh_from_ns = now_ns
        marks = {topic: len(messages) for topic, messages in received.items()}

        def stamp(msg) -> int:
            header = msg.transforms[0].header if isinstance(msg, TFMessage) else msg.header
            return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec

        def fresh(topic: str) -> list:
            return [m for m in received[topic][marks[topic]:]
                    if (not isinstance(m, TFMessage) or m.transforms)
                    and fresh_from_ns <= stamp(m) <= now_ns]

        # 3 s of the fresh clock at least, and on until every output has come in that window: the
        # probe may still be taking the messages queued during the fuzzing.
        tick(300)
        fresh_outputs = ('twist_actual', 'joint_states', '/tf', 'ground_truth', 'odom', 'pose')
        deadline = time.monotonic() + 30
        while not all(fresh(topic) for topic in fresh_outputs):
            assert time.monotonic() < deadline, (
                f'nothing after the fuzzing on {[t for t in fresh_outputs if not fresh(t)]}')
            tick()
        for topic in fresh_outputs:
            bad = [m for m in fresh(topic) if non_finite(m)]
            assert not bad, f'{topic}: non-finite after fuzzing: {bad[0]}'
        for name, node in nodes.items():
            lines = node.output().count('\n')
            assert lines < 250, f'{name} logged {lines} lines for {sent} messages:\n' + (
                node.output()[-3000:])
        print(f'fuzz: {sent} messages in {FUZZ_S:g} s; log lines: ' + ', '.join(
            f'{name} {node.output().count(chr(10))}' for name, node in nodes.items()))
    finally:
        for node in nodes.values():
            node.stop(timeout_s=5.0)
        probe.close()
