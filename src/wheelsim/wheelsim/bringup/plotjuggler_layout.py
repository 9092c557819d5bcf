"""PlotJuggler layouts for a namespaced or frame-prefixed robot (used by ``launch/sim.launch.py``).

PlotJuggler's ROS 2 plugin subscribes by absolute topic name and ignores the launch namespace,
so a robot under a namespace needs a copy of the layout with every topic under it. It names a
JointState's series ``<topic>/<joint name>/<position|velocity|effort>``, and vehicle_sim's joint
names carry its ``frame_prefix``: a prefixed robot needs the prefix in those series too.
"""

from __future__ import annotations

import re

#: Where a joint name starts in a series of the layout's joint_states.
JOINT_SERIES = '/joint_states/'


def namespaced_layout(layout_xml: str, namespace: str, joint_prefix: str = '') -> str:
    """The PlotJuggler layout XML with every selected topic moved under ``namespace`` and
    ``joint_prefix`` (vehicle_sim's ``frame_prefix``, e.g. ``robot1/``) before every joint
    name of a joint_states series (the layout unchanged for the root namespace and no
    prefix)."""
    if namespace.strip('/'):
        prefix = '/' + namespace.strip('/')
        topics = re.search(r'<selected_topics value="([^"]*)"', layout_xml).group(1).split(';')
        for topic in topics:
            layout_xml = re.sub(rf'(["> ;]){re.escape(topic)}(?=[/";<])',
                                rf'\g<1>{prefix}{topic}', layout_xml)
    return layout_xml.replace(JOINT_SERIES, JOINT_SERIES + joint_prefix)
