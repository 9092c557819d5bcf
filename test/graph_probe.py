"""Count the messages on every topic of the ROS graph once a launch is up; write them as JSON.

    python graph_probe.py OUT.json --nodes /a,/b [--expect /t1,/t2] [--frame TOPIC 'A -> B']...
                          [--window S] [--timeout S]

Waits until every node of ``--nodes`` (fully qualified names) is in the graph, then subscribes
to every topic that has a publisher, as topics appear (QoS matched: reliable and transient local
for a latched topic, best effort otherwise), and counts what arrives; on
``tf2_msgs/msg/TFMessage`` topics it also collects the ``parent -> child`` frames. It stops
counting once ``--window`` seconds have passed, every topic of ``--expect`` has had a message
and every ``--frame`` has been seen on its topic, or after ``--timeout`` seconds in all (then
the counts say what was missing). Writes
``{'topics': {'TOPIC [TYPE]': {'topic', 'type', 'publishers', 'latched', 'messages',
'frames'}}, 'nodes': [...], 'up': bool, 'waited_s': float, 'missing': [...]}`` (the layout of
../shared/ros-launch's launch_run probe, plus whether the nodes came up, how long it took and
the topics of ``--expect`` and the frames of ``--frame`` never seen, ``TOPIC: A -> B`` for a
frame) to OUT.json, then destroys its node.

A process of its own: rmw_fastrtps's teardown of a participant can hang while holding the
interpreter lock (docs/reliability.md), and a Kilted CI run of 2026-11-29 saw launch_run, whose
probe runs inside it, freeze. Here the result is written before the teardown, and a teardown
that outlasts TEARDOWN_S ends the process with every thread's stack and exit code 1
(faulthandler). The teardown is not skipped: a participant that vanishes without one stays a
matched reader until its lease ends, and the launch's publishers to it stalled at their
shutdown.
"""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import json
import os
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message

IGNORED = ('/rosout', '/parameter_events')
TF_TYPE = 'tf2_msgs/msg/TFMessage'
TEARDOWN_S = 10.0


def message_class(type_name: str) -> type:
    package, kind, name = type_name.split('/')
    return getattr(importlib.import_module(f'{package}.{kind}'), name)


class GraphProbe:
    """Counting subscriptions to every published topic, added as topics appear."""

    def __init__(self, node) -> None:
        self.node = node
        self.topics: dict[str, dict] = {}

    def subscribe_new_topics(self) -> None:
        for topic, types in self.node.get_topic_names_and_types():
            if topic.startswith(IGNORED):
                continue
            for type_name in types:
                key = f'{topic} [{type_name}]'
                if key in self.topics:
                    continue
                # Only types with a publisher: Fast DDS refuses a second type on one topic in
                # one participant (cmd_vel while vehicle_sim picks Twist or TwistStamped).
                infos = [i for i in self.node.get_publishers_info_by_topic(topic)
                         if i.topic_type == type_name]
                if infos:
                    self._subscribe(key, topic, type_name, infos)

    def _subscribe(self, key: str, topic: str, type_name: str, infos: list) -> None:
        latched = all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                      for i in infos)
        info = {'topic': topic, 'type': type_name, 'publishers': len(infos),
                'latched': latched, 'messages': 0, 'frames': set()}
        self.topics[key] = info
        qos = QoSProfile(
            depth=10,
            reliability=ReliabilityPolicy.RELIABLE if latched else ReliabilityPolicy.BEST_EFFORT,
            durability=(DurabilityPolicy.TRANSIENT_LOCAL if latched
                        else DurabilityPolicy.VOLATILE))
        is_tf = type_name == TF_TYPE

        def count(serialized: bytes) -> None:
            info['messages'] += 1
            if is_tf:
                message = deserialize_message(serialized, message_class(TF_TYPE))
                info['frames'].update(f'{t.header.frame_id} -> {t.child_frame_id}'
                                      for t in message.transforms)

        self.node.create_subscription(message_class(type_name), topic, count, qos, raw=True)

    def result(self) -> dict:
        nodes = sorted(name for name in graph_nodes(self.node)
                       if not name.rsplit('/', 1)[1].startswith(('graph_probe', 'launch_ros_')))
        topics = {key: {**info, 'frames': sorted(info['frames'])}
                  for key, info in self.topics.items()}
        return {'topics': topics, 'nodes': nodes}


def graph_nodes(node) -> set[str]:
    return {namespace.rstrip('/') + '/' + name
            for name, namespace in node.get_node_names_and_namespaces()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('out')
    parser.add_argument('--nodes', required=True, help='comma-separated node names to wait for')
    parser.add_argument('--expect', default='', help='comma-separated topics to wait for')
    parser.add_argument('--frame', nargs=2, action='append', default=[],
                        metavar=('TOPIC', 'PARENT_TO_CHILD'),
                        help="a transform to wait for on a TFMessage topic: '/tf' 'map -> odom'")
    parser.add_argument('--window', type=float, default=3.0, help='seconds counted at least')
    parser.add_argument('--timeout', type=float, default=90.0, help='seconds in all at most')
    args = parser.parse_args(argv)
    nodes = set(filter(None, args.nodes.split(',')))
    expected = set(filter(None, args.expect.split(',')))
    t0 = time.monotonic()
    rclpy.init(args=[])
    node = rclpy.create_node(f'graph_probe_{os.getpid()}', start_parameter_services=False)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    probe = GraphProbe(node)
    up = False
    while not up and time.monotonic() - t0 < args.timeout:
        executor.spin_once(timeout_sec=0.1)
        up = nodes <= graph_nodes(node)
    counting_since = time.monotonic()

    def missing() -> list[str]:
        seen = {info['topic'] for info in probe.topics.values() if info['messages']}
        frames = {(info['topic'], frame) for info in probe.topics.values()
                  for frame in info['frames']}
        return sorted(expected - seen) + [f'{topic}: {frame}' for topic, frame in args.frame
                                          if (topic, frame) not in frames]

    while up and (time.monotonic() - counting_since < args.window or missing()) \
            and time.monotonic() - t0 < args.timeout:
        probe.subscribe_new_topics()
        executor.spin_once(timeout_sec=0.05)
    result = {**probe.result(), 'up': up, 'waited_s': round(counting_since - t0, 2),
              'missing': missing()}
    with open(args.out + '.part', 'w') as stream:
        json.dump(result, stream, indent=1)
    os.replace(args.out + '.part', args.out)
    faulthandler.dump_traceback_later(TEARDOWN_S, exit=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()
    faulthandler.cancel_dump_traceback_later()


if __name__ == '__main__':
    main()
