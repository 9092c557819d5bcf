"""The URDF vehicle_sim publishes: the vehicle, its laser and its REP-120 footprint frame.

One function for the node and the launch files (robot_state_publisher gets the same text): the
vehicle's links and joints (:func:`wheelsim.core.vehicle.urdf.build_urdf`), the laser
``scan.frame_id`` at ``scan.x, scan.y, scan.z, scan.yaw`` when the scan is enabled, and
``footprint_frame`` (REP-120 ``base_footprint``) at the base frame's origin when it is set.
Every name gets ``frame_prefix``.
"""

from __future__ import annotations

from wheelsim.core.vehicle.config import VehicleConfig
from wheelsim.core.vehicle.urdf import FixedFrame, build_urdf
from wheelsim.core.vehicle_sim.config import VehicleSimSettings

LASER_VISUAL_RADIUS_M = 0.035


def vehicle_sim_urdf(config: VehicleConfig, settings: VehicleSimSettings) -> str:
    """URDF text of the simulated vehicle with its sensor and footprint frames."""
    frames = []
    scan = settings.scan
    if scan.enabled:
        frames.append(FixedFrame(scan.frame_id, scan.x, scan.y, scan.z, scan.yaw,
                                 LASER_VISUAL_RADIUS_M))
    if settings.footprint_frame:
        frames.append(FixedFrame(settings.footprint_frame))
    return build_urdf(config, settings.frame_prefix, base_link=settings.base_frame,
                      fixed_frames=frames)
