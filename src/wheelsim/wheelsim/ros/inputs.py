"""Checks on received messages shared by the nodes: frame names, static transforms, finite poses
and twists.

:class:`MapPoses` turns a received pose into a planar pose in the node's map frame: a pose in
that frame (or with an empty frame) as it is, a pose in a frame joined to it by static transforms
(RViz's fixed frame ``map`` for a robot in ``robot1/map``) transformed, anything else dropped.
A dropped message gives a warning, at most :data:`LINES_PER_PERIOD` per :data:`WARN_PERIOD_S`
per kind: the few a person sends (goals, initial poses) are each logged, a stream of bad
messages cannot flood the log.
"""

from __future__ import annotations

import math
import time
from collections import deque

import numpy as np
from geometry_msgs.msg import Pose

from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import MAX_COORDINATE_M, Floats3, Pose2D, compose_floats
from wheelsim.core.units import NS_PER_S
from wheelsim.ros.conversions import pose2d
from wheelsim.ros.seam import NodeSeam
from wheelsim.ros.static_frames import StaticFrames

WARN_PERIOD_S = 5.0  # throttle of warnings that can repeat with every message
#: A body twist with a component beyond +- this (m/s, rad/s) is refused like a non-finite one:
#: no vehicle moves that fast, and a pose predicted with it overflows the trackers' arithmetic.
MAX_TWIST_COMPONENT = 1e6


INFO_PERIOD_S = 1.0  # throttle of the notes a message triggers (a new plan, a teleport)
#: The lines of one kind a period lets through.
LINES_PER_PERIOD = 5
IDENTITY: Floats3 = (0.0, 0.0, 0.0)  # map_T of a pose already in the map frame


def within_pose_bounds(x_m: float, y_m: float, yaw_rad: float) -> bool:
    """Whether a planar pose (or transform) is finite with x and y within
    +-:data:`MAX_COORDINATE_M`."""
    return (abs(x_m) <= MAX_COORDINATE_M and abs(y_m) <= MAX_COORDINATE_M
            and math.isfinite(yaw_rad))  # False for NaN too


class InputWarnings:
    """Log lines that received messages trigger, at most :data:`LINES_PER_PERIOD` per period per
    kind (the topic and the reason), so that a person's few requests are each logged and a flood
    of messages cannot flood the log: warnings per :data:`WARN_PERIOD_S`, notes per
    :data:`INFO_PERIOD_S`, on the node's clock (simulated time in a run, so its log does not
    depend on how fast the machine runs it; a clock that went back lets the next line
    through; before a simulated clock starts, the steady clock). rclpy's throttle is per call
    site, which would let one topic's lines hide another's."""

    def __init__(self, seam: NodeSeam) -> None:
        self._seam = seam
        self._logged_ns: dict[str, deque[int]] = {}  # per kind, the times of its last lines

    def _due(self, kind: str, period_s: float) -> bool:
        # Time 0 is a clock not started (use_sim_time before the first /clock), which stands
        # still: the steady clock then, or the period would never end.
        now_ns = self._seam.now_ns() or time.monotonic_ns()
        logged = self._logged_ns.get(kind)
        if logged is None:
            logged = self._logged_ns[kind] = deque(maxlen=LINES_PER_PERIOD)
        elif len(logged) == LINES_PER_PERIOD and 0 <= now_ns - logged[0] < period_s * NS_PER_S:
            return False
        logged.append(now_ns)
        return True

    def warn(self, kind: str, text: str) -> None:
        if self._due(kind, WARN_PERIOD_S):
            self._seam.logger.warning(text)

    def info(self, kind: str, text: str) -> None:
        if self._due(kind, INFO_PERIOD_S):
            self._seam.logger.info(text)


def checked_twist(twist: Floats3, warnings: InputWarnings) -> Floats3 | None:
    """``twist`` (``vx_mps, vy_mps, wz_radps``, as :func:`twist2d` gives a received one); None,
    with a throttled warning, when a component is not finite or beyond
    +-:data:`MAX_TWIST_COMPONENT`."""
    vx_mps, vy_mps, wz_radps = twist
    if (abs(vx_mps) <= MAX_TWIST_COMPONENT and abs(vy_mps) <= MAX_TWIST_COMPONENT
            and abs(wz_radps) <= MAX_TWIST_COMPONENT):  # False for NaN too
        return twist
    warnings.warn('odom twist', (
        f'odom twist ignored: ({vx_mps:g} m/s, {vy_mps:g} m/s, {wz_radps:g} rad/s) must be '
        f'finite and within +-{MAX_TWIST_COMPONENT:g}'))
    return None


class MapPoses:
    """Received poses as planar poses in ``map_frame`` (see the module doc)."""

    def __init__(self, seam: NodeSeam, map_frame: str) -> None:
        self._seam = seam
        self.map_frame = map_frame
        self.warnings = InputWarnings(seam)
        self._static = StaticFrames(seam)

    def frame_matches(self, frame_id: str, what: str) -> bool:
        """Whether ``frame_id`` is the map frame (or empty); warns (throttled) when not, saying
        why: its static transform was refused, none joins the two, or one does but ``what``
        is taken in the map frame only (the controller's plans)."""
        frame = frame_id.lstrip('/')
        if frame in ('', self.map_frame):
            return True
        refused = self._static.refused.get(frame)
        if refused:
            why = f'/tf_static was ignored for it: {refused}'
        elif self._static.target_T_source(self.map_frame, frame) is not None:
            why = f'a static transform joins them, but a {what} is taken in that frame only'
        else:
            why = 'no static transform joins them'
        self.warnings.warn(f'{what} frame', (
            f'{what} ignored: its frame is "{frame}", {self._seam.name} works in '
            f'"{self.map_frame}" ({why})'))
        return False

    def map_T(self, frame_id: str, what: str) -> Floats3 | None:
        """The planar transform from ``frame_id`` into the map frame; None (and a throttled
        warning) when no static transform joins them, or when they put ``frame_id`` beyond
        +-:data:`MAX_COORDINATE_M` of the map frame (or not finitely far)."""
        frame = frame_id.lstrip('/')
        if frame in ('', self.map_frame):
            return IDENTITY
        transform = self._static.target_T_source(self.map_frame, frame)
        if transform is None:
            self.frame_matches(frame, what)
            return None
        if not within_pose_bounds(*transform):
            self.warnings.warn(f'{what} frame too far', (
                f'{what} ignored: the static transforms put "{frame}" at '
                f'({transform[0]:g}, {transform[1]:g}) m '
                f'from "{self.map_frame}", beyond +-{MAX_COORDINATE_M:g} m'))
            return None
        return transform

    def pose(self, pose: Pose, frame_id: str, what: str) -> Pose2D | None:
        """``pose`` (in ``frame_id``) in the map frame if finite and transformable, else None."""
        planar = self.planar(*pose2d(pose), frame_id, what)
        return None if planar is None else Pose2D(*planar)

    def planar(self, x_m: float, y_m: float, yaw_rad: float, frame_id: str, what: str
               ) -> Floats3 | None:
        """:meth:`pose` of the planar pose (x, y, yaw) in ``frame_id``, as plain floats (a node
        reading a pose at every sample builds its Pose2D when it uses one). Refused (None, and a
        throttled warning) unless finite and within +-:data:`MAX_COORDINATE_M` both as given
        and in the map frame."""
        if not within_pose_bounds(x_m, y_m, yaw_rad):
            self._refuse((x_m, y_m, yaw_rad), frame_id.lstrip('/') or self.map_frame, what)
            return None
        # The map frame (never starting with '/', see frames.check_frame_text) as map_T finds it.
        transform = IDENTITY if frame_id == self.map_frame else self.map_T(frame_id, what)
        if transform is None:
            return None
        if transform is IDENTITY:
            # compose_floats(IDENTITY, planar) without its trigonometry: cos 0 = 1 and sin 0 = 0
            # exactly, so each component is 0 + the input (which turns -0.0 into 0.0 alike).
            return 0.0 + x_m, 0.0 + y_m, wrap_angle(0.0 + yaw_rad)
        in_map = compose_floats(transform, (x_m, y_m, yaw_rad))
        if not within_pose_bounds(*in_map):
            self._refuse(in_map, self.map_frame, what)
            return None
        return in_map

    def _refuse(self, planar: Floats3, frame: str, what: str) -> None:
        """Warn why a pose (x, y, yaw: its position and its orientation's heading) in ``frame``
        with a non-finite or too large value is ignored, naming the field."""
        x_m, y_m, yaw_rad = planar
        if not all(math.isfinite(v) for v in planar):
            fields = [f'position.{axis} is {value}' for axis, value in (('x', x_m), ('y', y_m))
                      if not math.isfinite(value)]
            if not math.isfinite(yaw_rad):
                fields.append('orientation has no heading (a zero or non-finite quaternion)')
            self.warnings.warn(f'{what} not finite', f'{what} ignored: {", ".join(fields)}')
        else:
            self.warnings.warn(f'{what} too far',
                               f'{what} ignored: ({x_m:g}, {y_m:g}) m in "{frame}" is beyond '
                               f'+-{MAX_COORDINATE_M:g} m')


def rotate_planar_covariance(covariance: np.ndarray, yaw_rad: float) -> np.ndarray:
    """A 3x3 (x, y, yaw) covariance seen from a frame rotated by ``yaw_rad``: R C R^T."""
    cos, sin = math.cos(yaw_rad), math.sin(yaw_rad)
    rotation = np.array([[cos, -sin, 0.0], [sin, cos, 0.0], [0.0, 0.0, 1.0]])
    return rotation @ covariance @ rotation.T
