"""A minimal ``/diagnostics`` publisher (diagnostic_msgs/DiagnosticArray), one status per node.

``diagnostic_updater`` is not on PyPI; this covers what wheelsim needs: one named status with
a level, a message and key/value pairs, published by the caller at its own rate. The status is
named after the node's fully qualified name, so several robots do not collide.
"""

from __future__ import annotations

from collections.abc import Mapping

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from wheelsim.ros import qos
from wheelsim.ros.conversions import time_msg
from wheelsim.ros.seam import NodeSeam

OK = DiagnosticStatus.OK
WARN = DiagnosticStatus.WARN
ERROR = DiagnosticStatus.ERROR


class DiagnosticsPublisher:
    """Publishes one ``DiagnosticStatus`` named ``<node fully qualified name>: <task>``."""

    def __init__(self, seam: NodeSeam, task: str, hardware_id: str = '') -> None:
        self._publisher = seam.create_publisher(DiagnosticArray, '/diagnostics', qos.DEFAULT)
        self.name = f'{seam.fully_qualified_name}: {task}'
        self.hardware_id = hardware_id

    def publish(self, stamp_ns: int, level: bytes, message: str, values: Mapping[str, object]):
        """Publish the status; ``values`` are formatted with ``str`` (floats with ``:.6g``)."""
        status = DiagnosticStatus(
            level=level, name=self.name, message=message, hardware_id=self.hardware_id
        )
        status.values = [
            KeyValue(key=key, value=f'{value:.6g}' if isinstance(value, float) else str(value))
            for key, value in values.items()
        ]
        array = DiagnosticArray(status=[status])
        array.header.stamp = time_msg(stamp_ns)
        self._publisher.publish(array)
