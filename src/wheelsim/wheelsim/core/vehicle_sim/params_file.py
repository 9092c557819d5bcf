"""vehicle_sim's parameters from a ROS 2 parameters file, matched as ROS matches node names."""

from __future__ import annotations

import re
from typing import Any

from wheelsim.core import yaml_numbers
from wheelsim.core.params import flatten


def node_section(params_file: str, node_fqn: str) -> dict[str, Any]:
    """Flat parameters a params file gives the node ``node_fqn`` (e.g. ``/robot1/vehicle_sim``).

    Sections apply in file order when their key matches as ROS matches them: ``vehicle_sim``,
    ``/robot1/vehicle_sim``, ``/**/vehicle_sim``, ``/**`` (``*`` is one name, ``**`` any number).
    """
    with open(params_file) as stream:
        tree = yaml_numbers.load(stream) or {}
    values: dict[str, Any] = {}
    for key, body in tree.items():
        key = '/' + str(key).strip('/')
        pattern = re.escape(key).replace(r'/\*\*', '(/[^/]+)*').replace(r'\*', '[^/]+')
        if re.fullmatch(pattern, node_fqn):
            values.update(flatten((body or {}).get('ros__parameters', {})))
    return values
