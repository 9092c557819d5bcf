"""The URDF vehicle_sim publishes: the vehicle, its laser and its REP-120 footprint frame.

One function for the node and the launch files (robot_state_publisher gets the same text): the
vehicle's links and joints (:func:`wheelsim.core.vehicle.urdf.build_urdf`), the laser
``scan.frame_id`` at ``scan.x, scan.y, scan.z, scan.yaw`` when the scan is enabled, and
``footprint_frame`` (REP-120 ``base_footprint``) at the base frame's origin when it is set.
Every name gets ``frame_prefix``. A frame may not take the name of one of the vehicle's own
links (a wheel, a steering link), nor may the body (``base_frame``): URDF link and joint names are
unique (urdfdom refuses the description, robot_state_publisher and RViz with it);
:func:`check_frame_links` refuses it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from wheelsim.core.params import ParameterError
from wheelsim.core.vehicle.config import VehicleConfig
from wheelsim.core.vehicle.urdf import FixedFrame, build_urdf
from wheelsim.core.vehicle_sim.config import VehicleSimSettings

LASER_VISUAL_RADIUS_M = 0.035


def _fixed_frames(settings: VehicleSimSettings) -> list[tuple[str, FixedFrame]]:
    """The extra frames of the URDF, each with the parameter naming it."""
    frames = []
    scan = settings.scan
    if scan.enabled:
        frames.append(('scan.frame_id', FixedFrame(scan.frame_id, scan.x, scan.y, scan.z,
                                                   scan.yaw, LASER_VISUAL_RADIUS_M)))
    if settings.footprint_frame:
        frames.append(('footprint_frame', FixedFrame(settings.footprint_frame)))
    return frames


def check_frame_links(config: VehicleConfig, settings: VehicleSimSettings) -> None:
    """Raise ParameterError if a configured frame that becomes a link of the URDF
    (``base_frame``, the body; ``scan.frame_id``; ``footprint_frame``) names a wheel or
    steering link of the vehicle. Those are the children of its joints (the body is their
    root); the configuration already keeps the frames apart from each other. That also covers
    a frame's fixed joint, ``<frame>_joint``: every joint of the vehicle is named ``<its child
    link>_joint``, so the joint names clash only when the link names do."""
    robot = ET.fromstring(build_urdf(config))
    links = [joint.find('child').get('link') for joint in robot.iter('joint')]
    frames = [('base_frame', settings.base_frame)]
    frames += [(name, frame.link) for name, frame in _fixed_frames(settings)]
    for name, link in frames:
        if link in links:
            raise ParameterError(
                name, link, f'must differ from the wheel and steering links of the '
                f'{config.model} vehicle in its URDF ({", ".join(links)}): URDF link names are '
                'unique')


def vehicle_sim_urdf(config: VehicleConfig, settings: VehicleSimSettings) -> str:
    """URDF text of the simulated vehicle with its sensor and footprint frames (ParameterError
    if a frame takes a link's name: :func:`check_frame_links`)."""
    check_frame_links(config, settings)
    return build_urdf(config, settings.frame_prefix, base_link=settings.base_frame,
                      fixed_frames=[frame for _name, frame in _fixed_frames(settings)])
