"""Live: warn when nodes other than this one publish on a topic this node publishes.

rclpy reports no graph change as an event: the node calls :meth:`OtherPublishers.check` from a
wall-clock timer (every :data:`OTHER_PUBLISHERS_CHECK_PERIOD_S`). The warning names the other
nodes (namespace and name), each time that set changes, and says what follows and what to do.
A publisher whose node is not discovered yet is given one more check to be named.
"""

from __future__ import annotations

from wheelsim.ros.seam import NodeSeam

#: How often a node checks [s of wall time].
OTHER_PUBLISHERS_CHECK_PERIOD_S = 1.0
#: The node name rmw reports for a publisher whose node it has not discovered yet: a new
#: participant's DDS endpoint can arrive before its node list, which names it moments later.
UNDISCOVERED_NODE_NAME = '_NODE_NAME_UNKNOWN_'


class OtherPublishers:
    """Checks who else publishes on ``topic_name`` (resolved) for the node on ``seam``."""

    def __init__(self, seam: NodeSeam, topic_name: str, consequence: str) -> None:
        """``consequence``: the warning's end after "... besides this node" (what subscribers
        get, what to change)."""
        self._seam, self.topic_name, self._consequence = seam, topic_name, consequence
        self.others: tuple[str, ...] = ()  # the other publishers at the last check
        self._waited = False  # the last check waited for a publisher's node name

    def check(self) -> None:
        """Warn if other nodes publish on the topic and they are not the ones warned about. A
        node of this one's name and namespace (the same launch started twice) counts as
        another from the second publisher under that name on (this node has one)."""
        node = self._seam.rclpy_node
        own = (node.get_name(), node.get_namespace())
        names = [(info.node_name, info.node_namespace)
                 for info in node.get_publishers_info_by_topic(self.topic_name)]
        if not self._waited and any(name == UNDISCOVERED_NODE_NAME for name, _ in names):
            self._waited = True  # named at the next check, most likely: warn once, with it
            return
        self._waited = False
        namesakes = max(0, names.count(own) - 1)
        others = tuple(sorted(f'{namespace.rstrip("/")}/{name}' for name, namespace in names
                              if (name, namespace) != own))
        others += (f'{own[1].rstrip("/")}/{own[0]} (another node of this name)',) * namesakes
        if others and others != self.others:
            self._seam.logger.warning(f'{self.topic_name} has other publishers '
                                      f'({", ".join(others)}) besides this node{self._consequence}')
        self.others = others
