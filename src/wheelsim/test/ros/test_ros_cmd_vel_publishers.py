"""cmd_vel's publisher check (``wheelsim.ros.cmd_vel``) on a scripted ROS graph, no DDS."""

from __future__ import annotations

from types import SimpleNamespace

from geometry_msgs.msg import TwistStamped

from wheelsim.ros import cmd_vel as cmd_vel_module
from wheelsim.ros.cmd_vel import CmdVelInput

TWIST, STAMPED = 'geometry_msgs/msg/Twist', 'geometry_msgs/msg/TwistStamped'


class Graph:
    """The few calls CmdVelInput makes of a live seam; ``publishers`` is the graph to report."""

    live = True

    def __init__(self) -> None:
        self.publishers: list[SimpleNamespace] = []
        self.warnings: list[str] = []
        self.logger = SimpleNamespace(warning=self.warnings.append, info=lambda text: None)
        self.rclpy_node = SimpleNamespace(
            create_guard_condition=lambda callback: SimpleNamespace(trigger=lambda: None),
            get_publishers_info_by_topic=lambda topic: list(self.publishers))

    def create_subscription(self, msg_type, topic, callback, qos_profile):
        return SimpleNamespace(topic_name=f'/{topic}')

    def publish_as(self, node: str, topic_type: str) -> None:
        self.publishers.append(SimpleNamespace(node_name=node, node_namespace='/',
                                               topic_type=topic_type))

    def publish_undiscovered(self, topic_type: str) -> None:
        """A publisher whose node rmw has not discovered yet (its placeholder names)."""
        self.publishers.append(SimpleNamespace(node_name='_NODE_NAME_UNKNOWN_',
                                               node_namespace='_NODE_NAMESPACE_UNKNOWN_',
                                               topic_type=topic_type))


def test_a_publisher_is_named_once_its_node_is_discovered():
    """Found in the live-mode review: a Twist publisher from a new process was reported as
    ``_NODE_NAMESPACE_UNKNOWN_/_NODE_NAME_UNKNOWN_`` (its DDS endpoint came before its node's
    name), then warned about again a moment later under its name."""
    graph = Graph()
    cmd_vel = CmdVelInput(graph, 'twist_stamped', lambda *command: None, (100.0, 100.0))
    assert cmd_vel.msg_type is TwistStamped
    graph.publish_as('controller', STAMPED)
    graph.publish_undiscovered(TWIST)
    cmd_vel.check_publishers()
    assert graph.warnings == []  # waits for the name
    graph.publishers[-1] = SimpleNamespace(node_name='teleop', node_namespace='/',
                                           topic_type=TWIST)
    cmd_vel.check_publishers()
    cmd_vel.check_publishers()
    assert len(graph.warnings) == 1, graph.warnings
    assert graph.warnings[0].startswith('/cmd_vel: ignoring /teleop: they publish '
                                        'geometry_msgs/msg/Twist')


def test_a_publisher_whose_node_stays_unknown_is_still_warned_about():
    """A writer with no ROS node name (plain DDS) is reported after the wait, once."""
    graph = Graph()
    cmd_vel = CmdVelInput(graph, 'twist_stamped', lambda *command: None, (100.0, 100.0))
    graph.publish_undiscovered(TWIST)
    for _ in range(cmd_vel_module.UNDISCOVERED_NAME_CHECKS):
        cmd_vel.check_publishers()
    assert graph.warnings == []
    for _ in range(3):
        cmd_vel.check_publishers()
    assert len(graph.warnings) == 1, graph.warnings
    assert 'ignoring _NODE_NAMESPACE_UNKNOWN_/_NODE_NAME_UNKNOWN_' in graph.warnings[0]


def test_other_publishers_of_a_topic_are_named_once_their_node_is_discovered():
    """The same for vehicle_sim's check of other publishers of ground_truth and map."""
    from wheelsim.ros.other_publishers import OtherPublishers

    graph = Graph()
    graph.rclpy_node.get_name = lambda: 'vehicle_sim'
    graph.rclpy_node.get_namespace = lambda: '/'
    odometry = 'nav_msgs/msg/Odometry'
    graph.publish_as('vehicle_sim', odometry)
    others = OtherPublishers(graph, '/ground_truth', ': subscribers get both')
    others.check()
    graph.publish_undiscovered(odometry)
    others.check()
    assert graph.warnings == []  # waits for the name
    graph.publishers[-1] = SimpleNamespace(node_name='vehicle_sim', node_namespace='/robot2',
                                           topic_type=odometry)
    for _ in range(3):
        others.check()
    assert graph.warnings == ['/ground_truth has other publishers (/robot2/vehicle_sim) besides '
                              'this node: subscribers get both'], graph.warnings
