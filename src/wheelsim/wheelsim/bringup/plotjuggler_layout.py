"""PlotJuggler layouts for a namespaced robot (used by ``launch/sim.launch.py``).

PlotJuggler's ROS 2 plugin subscribes by absolute topic name and ignores the launch namespace,
so a robot under a namespace needs a copy of the layout with every topic under it.
"""

from __future__ import annotations

import re


def namespaced_layout(layout_xml: str, namespace: str) -> str:
    """The PlotJuggler layout XML with every selected topic moved under ``namespace`` (the
    layout unchanged for the root namespace)."""
    if not namespace.strip('/'):
        return layout_xml
    prefix = '/' + namespace.strip('/')
    topics = re.search(r'<selected_topics value="([^"]*)"', layout_xml).group(1).split(';')
    for topic in topics:
        layout_xml = re.sub(rf'(["> ;]){re.escape(topic)}(?=[/";<])', rf'\g<1>{prefix}{topic}',
                            layout_xml)
    return layout_xml
