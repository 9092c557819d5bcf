"""Ground-truth scenarios and a batch runner for the localization simulator (tests, benchmark).

A scenario is exact ground truth as vehicle_sim publishes it: integer stamps [ns], poses
``map_T_base`` ``(x, y, yaw)`` and the body twist ``(vx, vy, wz)`` consistent with the motion.
:func:`run` feeds one through :class:`.model.Localization` and returns every output as
arrays (:class:`LocalizationRun`), with the errors against the truth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wheelsim.core.arrays import FloatArray, IntArray
from wheelsim.core.geometry.angles import wrap_angles
from wheelsim.core.geometry.se2 import relative
from wheelsim.core.localization.config import LocalizationConfig
from wheelsim.core.localization.model import Localization

START_NS = 1_000_000_000


@dataclass(frozen=True)
class Scenario:
    """Ground truth: ``stamps_ns (n,)``, ``poses (n, 3)`` in map, ``twists (n, 3)`` in base."""

    stamps_ns: IntArray
    poses: FloatArray
    twists: FloatArray


def _stamps(duration_s: float, rate_hz: float) -> tuple[IntArray, FloatArray]:
    period_ns = round(1e9 / rate_hz)
    stamps_ns = START_NS + period_ns * np.arange(int(round(duration_s * rate_hz)) + 1)
    return stamps_ns, (stamps_ns - START_NS) * 1e-9


def figure_eight(
    duration_s: float = 40.0, rate_hz: float = 50.0, size_m: float = 3.0, lap_s: float = 20.0
) -> Scenario:
    """A figure-eight ``x = a sin(w t)``, ``y = (a / 2) sin(2 w t)`` (``a = size_m``, ``w =
    2 pi / lap_s``), heading along the path; 0.94 to 1.33 m/s with the defaults."""
    stamps_ns, t = _stamps(duration_s, rate_hz)
    w = 2.0 * np.pi / lap_s
    a = size_m
    vx_map, vy_map = a * w * np.cos(w * t), a * w * np.cos(2.0 * w * t)
    ax_map, ay_map = -a * w * w * np.sin(w * t), -2.0 * a * w * w * np.sin(2.0 * w * t)
    speed = np.hypot(vx_map, vy_map)
    yaw_rate = (vx_map * ay_map - vy_map * ax_map) / speed**2
    poses = np.stack(
        [a * np.sin(w * t), 0.5 * a * np.sin(2.0 * w * t), np.arctan2(vy_map, vx_map)], axis=-1
    )
    twists = np.stack([speed, np.zeros_like(t), yaw_rate], axis=-1)
    return Scenario(stamps_ns, poses, twists)


def constant_twist(
    twist: tuple[float, float, float], duration_s: float, rate_hz: float = 50.0
) -> Scenario:
    """Constant body twist ``(vx, vy, wz)`` from the origin: a line, an arc, a turn on the spot."""
    stamps_ns, t = _stamps(duration_s, rate_hz)
    vx, vy, wz = twist
    yaw = wz * t
    if wz == 0.0:
        x, y = vx * t, vy * t
    else:
        x = (vx * np.sin(yaw) + vy * (np.cos(yaw) - 1.0)) / wz
        y = (vx * (1.0 - np.cos(yaw)) + vy * np.sin(yaw)) / wz
    poses = np.stack([x, y, wrap_angles(yaw)], axis=-1)
    return Scenario(stamps_ns, poses, np.tile(np.asarray(twist, dtype=float), (len(t), 1)))


@dataclass(frozen=True)
class LocalizationRun:
    """Outputs of one run, one row per ground-truth sample; errors are estimate minus truth
    (yaw wrapped): ``map_error`` in map, ``odom_error`` against the true motion since start."""

    odom_T_base: FloatArray
    odom_covariance: FloatArray
    map_T_base: FloatArray
    map_covariance: FloatArray
    map_T_odom: FloatArray
    map_error: FloatArray
    odom_error: FloatArray
    fix_error: FloatArray

    def nees(self, which: str = 'map') -> FloatArray:
        """Normalised estimation error squared per sample, ``e^T P^-1 e`` (``map`` or ``odom``);
        NaN where the covariance is singular (a known pose, e.g. the first sample)."""
        error = self.map_error if which == 'map' else self.odom_error
        covariance = self.map_covariance if which == 'map' else self.odom_covariance
        regular = np.linalg.det(covariance) > 0.0
        nees = np.full(len(error), np.nan)
        solved = np.linalg.solve(covariance[regular], error[regular][..., None])[..., 0]
        nees[regular] = np.einsum('ni,ni->n', error[regular], solved)
        return nees


def _error(estimate: FloatArray, truth: FloatArray) -> FloatArray:
    error = estimate - truth
    error[..., 2] = wrap_angles(error[..., 2])
    return error


def run(config: LocalizationConfig, scenario: Scenario) -> LocalizationRun:
    """Feed ``scenario`` through a fresh :class:`Localization` built from ``config``."""
    localization = Localization(config)
    outputs = [
        localization.step(int(stamp_ns), pose, twist)
        for stamp_ns, pose, twist in zip(
            scenario.stamps_ns, scenario.poses, scenario.twists, strict=True
        )
    ]
    odom = np.array([o.odom_T_base for o in outputs])
    estimate = np.array([o.map_T_base for o in outputs])
    fixes = [(i, o.pose_fix) for i, o in enumerate(outputs) if o.pose_fix is not None]
    fix_rows = np.array([i for i, _ in fixes], dtype=int)
    fix_error = (
        _error(np.array([f for _, f in fixes]), scenario.poses[fix_rows])
        if fixes
        else np.zeros((0, 3))
    )
    return LocalizationRun(
        odom_T_base=odom,
        odom_covariance=np.array([o.odom_covariance for o in outputs]),
        map_T_base=estimate,
        map_covariance=np.array([o.map_covariance for o in outputs]),
        map_T_odom=np.array([o.map_T_odom for o in outputs]),
        map_error=_error(estimate, scenario.poses),
        odom_error=_error(odom, relative(scenario.poses[0], scenario.poses)),
        fix_error=fix_error,
    )
