"""Keep robot_state_publisher's URDF equal to vehicle_sim's after a live change of the vehicle.

The launch files give robot_state_publisher the URDF as its ``robot_description`` parameter and
make it the only publisher of the ``robot_description`` topic. When a vehicle parameter changes
while vehicle_sim runs, vehicle_sim sets that parameter anew through the node's
``set_parameters`` service; robot_state_publisher (3.3.x on Jazzy, 3.4.x on Kilted) takes a
changed ``robot_description`` parameter at run time and republishes it. Without such a node
(vehicle_sim alone) nothing happens.
"""

from __future__ import annotations

from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters

from wheelsim.ros.seam import NodeSeam


class RobotStatePublisherSync:
    """Sets ``robot_description`` of the node ``node_name`` (relative: in our namespace). Live
    only: a headless run changes no parameter while it runs, and has no such node."""

    def __init__(self, seam: NodeSeam, node_name: str) -> None:
        self._seam = seam
        self._client = None
        if node_name and seam.live:
            self._client = seam.rclpy_node.create_client(
                SetParameters, f'{node_name}/set_parameters')

    def update(self, urdf: str) -> None:
        """Send ``urdf`` if the node is there; a refusal is logged."""
        if self._client is None or not self._client.service_is_ready():
            return
        value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=urdf)
        request = SetParameters.Request(
            parameters=[Parameter(name='robot_description', value=value)])
        self._client.call_async(request).add_done_callback(self._on_reply)

    def _on_reply(self, future) -> None:
        result = future.result()
        if result is None or not all(r.successful for r in result.results):
            reasons = [] if result is None else [r.reason for r in result.results]
            self._seam.logger.warning(
                f'{self._client.srv_name}: robot_description not updated {reasons}; RViz may '
                'show the vehicle as it was')
