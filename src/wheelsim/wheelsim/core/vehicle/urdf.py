"""URDF of a vehicle built from its configuration (for robot_state_publisher and RViz).

One body link (base_link, a box spanning the wheels), every wheel on a continuous joint
(axis +y, positive rolls forward), steered wheels below a revolute steering joint (axis +z)
limited to the angles the wheel reaches within ``max_position`` (continuous when unlimited).
Joint names equal ``Vehicle.joint_names``; ``prefix`` goes in front of every link and joint
name. base_link is on the ground; wheel axles are one wheel radius above it. Sensor and REP-120
frames are extra links on fixed joints (``<link>_joint``) from base_link (:class:`FixedFrame`);
one with ``visual_radius_m`` is drawn as a small cylinder (a laser scanner).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

from wheelsim.core.vehicle.config import BicycleConfig, VehicleConfig
from wheelsim.core.vehicle.joints import Wheel, wheel_layout

BODY_RGBA = '0.2 0.4 0.8 1'
WHEEL_RGBA = '0.1 0.1 0.1 1'
UNLIMITED_RATE_RADPS = 1000.0
SENSOR_RGBA = '0.9 0.4 0.1 1'


@dataclass(frozen=True)
class FixedFrame:
    """A link fixed to base_link: its pose there (m, rad) and an optional cylinder to draw."""

    link: str
    x_m: float = 0.0
    y_m: float = 0.0
    z_m: float = 0.0
    yaw_rad: float = 0.0
    visual_radius_m: float = 0.0


def _xyz(x: float, y: float, z: float) -> str:
    return f'{x:.9g} {y:.9g} {z:.9g}'


def _material(parent: ET.Element, name: str, rgba: str) -> None:
    ET.SubElement(ET.SubElement(parent, 'material', name=name), 'color', rgba=rgba)


def _link(robot: ET.Element, name: str, shape: str, size: dict[str, str], origin: dict[str, str],
          material: str) -> None:
    visual = ET.SubElement(ET.SubElement(robot, 'link', name=name), 'visual')
    ET.SubElement(visual, 'origin', **origin)
    ET.SubElement(ET.SubElement(visual, 'geometry'), shape, **size)
    ET.SubElement(visual, 'material', name=material)


def _joint(robot: ET.Element, name: str, kind: str, parent: str, child: str, xyz: str,
           axis: str) -> ET.Element:
    joint = ET.SubElement(robot, 'joint', name=name, type=kind)
    ET.SubElement(joint, 'parent', link=parent)
    ET.SubElement(joint, 'child', link=child)
    ET.SubElement(joint, 'origin', xyz=xyz, rpy='0 0 0')
    ET.SubElement(joint, 'axis', xyz=axis)
    return joint


def _body(robot: ET.Element, name: str, wheels: tuple[Wheel, ...]) -> None:
    radius = wheels[0].radius_m
    xs = [w.x_m for w in wheels]
    ys = [w.y_m for w in wheels]
    length = max(xs) - min(xs) + 2.0 * radius
    width = max(max(ys) - min(ys) - radius, radius)
    center = _xyz(0.5 * (max(xs) + min(xs)), 0.5 * (max(ys) + min(ys)), radius)
    _link(robot, name, 'box', {'size': _xyz(length, width, 0.8 * radius)},
          {'xyz': center, 'rpy': '0 0 0'}, 'body')


def _fixed_frame(robot: ET.Element, body: str, frame: FixedFrame, prefix: str) -> None:
    name = prefix + frame.link
    if frame.visual_radius_m > 0.0:
        radius = frame.visual_radius_m
        _link(robot, name, 'cylinder', {'radius': f'{radius:.9g}', 'length': f'{radius:.9g}'},
              {'xyz': '0 0 0', 'rpy': '0 0 0'}, 'sensor')
    else:
        ET.SubElement(robot, 'link', name=name)
    joint = ET.SubElement(robot, 'joint', name=name + '_joint', type='fixed')
    ET.SubElement(joint, 'parent', link=body)
    ET.SubElement(joint, 'child', link=name)
    ET.SubElement(joint, 'origin', xyz=_xyz(frame.x_m, frame.y_m, frame.z_m),
                  rpy=f'0 0 {frame.yaw_rad:.9g}')


def build_urdf(config: VehicleConfig, prefix: str = '', base_link: str = 'base_link',
               fixed_frames: Sequence[FixedFrame] = ()) -> str:
    """URDF text of the selected model; ``prefix`` is put before every link and joint name."""
    wheels = wheel_layout(config)
    robot = ET.Element('robot', name=f'wheelsim_{config.model}')
    _material(robot, 'body', BODY_RGBA)
    _material(robot, 'wheel', WHEEL_RGBA)
    if any(frame.visual_radius_m > 0.0 for frame in fixed_frames):
        _material(robot, 'sensor', SENSOR_RGBA)
    body = prefix + base_link
    _body(robot, body, wheels)
    steering_rate = 0.0
    if isinstance(config.active, BicycleConfig):
        steering_rate = config.active.steering_actuator.max_velocity
    for wheel in wheels:
        axle = _xyz(wheel.x_m, wheel.y_m, wheel.radius_m)
        parent, wheel_origin = body, axle
        if wheel.steering is not None:
            steering_link = prefix + wheel.steering.joint.removesuffix('_joint')
            ET.SubElement(robot, 'link', name=steering_link)
            limits = wheel.steering.limits_rad
            kind = 'continuous' if limits is None else 'revolute'
            joint = _joint(robot, prefix + wheel.steering.joint, kind, body, steering_link, axle,
                           '0 0 1')
            if limits is not None:
                ET.SubElement(joint, 'limit', lower=f'{limits[0]:.9g}', upper=f'{limits[1]:.9g}',
                              effort='0',
                              velocity=f'{steering_rate or UNLIMITED_RATE_RADPS:.9g}')
            parent, wheel_origin = steering_link, _xyz(0.0, 0.0, 0.0)
        _link(robot, prefix + wheel.link, 'cylinder',
              {'radius': f'{wheel.radius_m:.9g}', 'length': f'{0.5 * wheel.radius_m:.9g}'},
              {'xyz': '0 0 0', 'rpy': f'{math.pi / 2:.9g} 0 0'}, 'wheel')
        _joint(robot, prefix + wheel.joint, 'continuous', parent, prefix + wheel.link,
               wheel_origin, '0 1 0')
    for frame in fixed_frames:
        _fixed_frame(robot, body, frame, prefix)
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding='unicode') + '\n'
