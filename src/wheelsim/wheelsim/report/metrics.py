"""Metrics of a run: how well the vehicle tracked its plan, reached its goal and knew its pose.

Pure functions over :class:`wheelsim.report.bag_data.RunData`. The error series
(:func:`tracking_errors`, :func:`localization_errors`) are what the plots show;
:func:`compute_metrics` condenses them into a flat dict of numbers for ``metrics.json``, the
summary and a scenario's pass criteria. Definitions are in ``docs/report.md``; every metric is
"smaller is better" except ``distance_travelled_m``, ``plans_received`` and ``min_clearance_m``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wheelsim.core.geometry.angles import wrap_angles
from wheelsim.core.geometry.se2 import compose, inverse
from wheelsim.core.planning.path import path_shape
from wheelsim.core.planning.timing import MOVING_MPS
from wheelsim.core.planning.trajectory import legs_of
from wheelsim.core.world.collision import clearances
from wheelsim.report.bag_data import PoseSeries, RunData
from wheelsim.report.geometry import (
    FloatArray,
    PathMatch,
    Polyline,
    hold_last,
    interp_pose,
    path_length_m,
)

SIGNIFICANT_DIGITS = 6
"""Floats in the metrics are rounded to this many significant digits (stable JSON)."""
DEFAULT_GOAL_TOLERANCE_M = 0.1


METRIC_NAMES = (
    # the main ones (a sweep table shows the first few numeric columns)
    'cross_track_rms_m', 'cross_track_max_m', 'heading_error_rms_rad', 'goal_position_error_m',
    'time_to_goal_s', 'localization_position_rms_m',
    # tracking and goal, more
    'heading_error_max_rad', 'along_track_rms_m', 'along_track_max_m', 'goal_heading_error_rad',
    # localization and odometry
    'localization_position_max_m', 'localization_heading_rms_rad', 'localization_heading_max_rad',
    'odom_drift_end_m', 'odom_heading_drift_end_rad', 'odom_drift_per_distance',
    # commanded vs actual velocity
    'cmd_vs_actual_vx_rms_mps', 'cmd_vs_actual_vy_rms_mps', 'cmd_vs_actual_wz_rms_radps',
    'distance_error_rel', 'distance_error_x_rel', 'distance_error_y_rel',
    # the run
    'distance_travelled_m', 'plans_received',
    # the world (with a map; the clearance with a footprint recorded too)
    'collisions', 'min_clearance_m',
    # the plan (the latest one): how long it is and how much it bends
    'plan_length_m', 'plan_max_curvature_inv_m', 'plan_total_turning_rad',
)
"""Every key of :func:`compute_metrics`' result, in that order: the main ones first (a sweep
table shows the first few). Units end the names; definitions are in ``docs/report.md``."""
LARGER_IS_BETTER = ('distance_travelled_m', 'plans_received', 'min_clearance_m')
"""The metrics whose worst value is the smallest (every other one: the largest)."""
WORLD_METRICS = ('collisions', 'min_clearance_m')
"""The metrics computed only for a run with a map (``min_clearance_m`` also needs a footprint
recorded)."""
MAIN_METRICS = METRIC_NAMES[:6]


@dataclass(frozen=True)
class TrackingErrors:
    """Errors of the true pose against the plan in effect, at the ground-truth stamps ``t_s``.

    ``cross_track_m``: signed distance to the matched closest point of the plan (left > 0);
    ``heading_rad``: true heading minus the plan's heading there; ``along_track_m``: arc length
    of the matched point minus the arc length scheduled for that time (ahead of schedule > 0;
    NaN for a plan without increasing pose stamps).
    """

    t_s: FloatArray
    cross_track_m: FloatArray
    heading_rad: FloatArray
    along_track_m: FloatArray


@dataclass(frozen=True)
class LocalizationErrors:
    """Estimate (``/pose``) minus ground truth at the estimate's stamps ``t_s`` (position error
    magnitude [m], heading [rad]), and the drift of odometry aligned to the ground truth at its
    first sample (:func:`odom_in_map`) at the odometry stamps ``odom_t_s``."""

    t_s: FloatArray
    position_m: FloatArray
    heading_rad: FloatArray
    odom_t_s: FloatArray
    odom_position_m: FloatArray
    odom_heading_rad: FloatArray


def _is_timed(plan: PoseSeries) -> bool:
    return len(plan) >= 2 and bool(np.all(np.diff(plan.t_s) >= 0)) and plan.t_s[-1] > plan.t_s[0]


#: A vehicle within CUSP_REACHED_M of a cusp, or within CUSP_NEAR_M of it and moving at least
#: MOVING_MPS the way of the next leg, has begun the next leg (the controller's rule, with
#: nearness for its schedule, which a recording lacks: the schedule waits for a late vehicle).
CUSP_REACHED_M = 0.1
CUSP_NEAR_M = 0.5


def _match_legs(plan: PoseSeries, t_s: FloatArray, x_m: FloatArray, y_m: FloatArray
                ) -> tuple[PathMatch, FloatArray]:
    """Samples at ``t_s`` (in time order) matched to ``plan`` (:meth:`Polyline.match`), and the
    plan's vertex arc lengths. A timed plan with cusps folds back on itself: the samples are
    matched with one leg at a time, the next from the first sample within
    :data:`CUSP_REACHED_M` of the cusp, or within :data:`CUSP_NEAR_M` and moving the next
    leg's way (the controller holds the vehicle to one leg the same way), so a vehicle backing
    away from a cusp is not taken for one on the leg it just drove."""
    polyline = Polyline(plan.x_m, plan.y_m, plan.yaw_rad)
    legs = legs_of(plan.x_m, plan.y_m, plan.yaw_rad)
    if len(legs) == 1 or not _is_timed(plan) or len(t_s) < 2:
        return polyline.match(x_m, y_m, extend_ends=True), polyline.vertex_s_m
    velocity = np.column_stack([np.gradient(x_m, t_s), np.gradient(y_m, t_s)])
    bounds = [0]
    for leg, after in zip(legs[:-1], legs[1:], strict=True):
        cusp = leg.last
        steps = np.column_stack([np.diff(plan.x_m[after.first:after.last + 1]),
                                 np.diff(plan.y_m[after.first:after.last + 1])])
        way = steps[np.argmax(np.hypot(*steps.T) > 0)]
        way = way / max(math.hypot(*way), 1e-12)
        to_cusp_m = np.hypot(x_m - plan.x_m[cusp], y_m - plan.y_m[cusp])
        begun = ((to_cusp_m <= CUSP_REACHED_M)
                 | ((to_cusp_m <= CUSP_NEAR_M) & (velocity @ way > MOVING_MPS)))
        begun[:bounds[-1]] = False
        bounds.append(int(np.argmax(begun)) if begun.any() else len(t_s))
    bounds.append(len(t_s))
    cross, s_m, yaw = np.empty(len(t_s)), np.empty(len(t_s)), np.empty(len(t_s))
    for leg, first, last in zip(legs, bounds[:-1], bounds[1:], strict=True):
        if first < last:
            part = slice(leg.first, leg.last + 1)
            match = Polyline(plan.x_m[part], plan.y_m[part], plan.yaw_rad[part]).match(
                x_m[first:last], y_m[first:last], extend_ends=True)
            cross[first:last], yaw[first:last] = match.cross_track_m, match.yaw_rad
            s_m[first:last] = match.s_m + polyline.vertex_s_m[leg.first]
    return PathMatch(cross_track_m=cross, s_m=s_m, yaw_rad=yaw), polyline.vertex_s_m


def tracking_errors(run: RunData) -> TrackingErrors:
    """Tracking errors of the ground truth; each sample against the plan received last at or
    before its stamp (samples before the first plan, or under an empty plan, are left out)."""
    truth = run.ground_truth
    parts: list[tuple[FloatArray, ...]] = []
    ends = [p.received_s for p in run.plans[1:]] + [math.inf]
    for plan, end_s in zip(run.plans, ends, strict=False):
        poses = plan.poses
        inside = (truth.t_s >= plan.received_s) & (truth.t_s < end_s)
        if not len(poses) or not inside.any():
            continue
        t_s = truth.t_s[inside]
        match, vertex_s_m = _match_legs(poses, t_s, truth.x_m[inside], truth.y_m[inside])
        heading = wrap_angles(truth.yaw_rad[inside] - match.yaw_rad)
        if _is_timed(poses):
            along = match.s_m - np.interp(t_s, poses.t_s, vertex_s_m)
        else:
            along = np.full(len(t_s), np.nan)
        parts.append((t_s, match.cross_track_m, heading, along))
    if not parts:
        return TrackingErrors(*[np.empty(0)] * 4)
    return TrackingErrors(*(np.concatenate(c) for c in zip(*parts, strict=True)))


def odom_in_map(run: RunData) -> PoseSeries:
    """Odometry poses moved into ``map`` by the transform that puts the first odometry sample
    (within the ground truth's time span) on the ground truth: its later separation from the
    ground truth is the drift. Empty without both topics."""
    truth, odom = run.ground_truth, run.odom
    if not len(truth) or not len(odom):
        return PoseSeries()
    keep = (odom.t_s >= truth.t_s[0]) & (odom.t_s <= truth.t_s[-1])
    if not keep.any():
        return PoseSeries()
    t_s = odom.t_s[keep]
    odom_poses = np.column_stack([odom.x_m[keep], odom.y_m[keep], odom.yaw_rad[keep]])
    true_start = np.concatenate(interp_pose(truth.t_s, t_s[:1], truth.x_m, truth.y_m,
                                            truth.yaw_rad))
    map_from_odom = compose(true_start, inverse(odom_poses[0]))
    return PoseSeries(t_s, *compose(map_from_odom, odom_poses).T)


def _pose_errors(truth: PoseSeries, other: PoseSeries) -> tuple[FloatArray, ...]:
    """(t, position error, heading error) of ``other`` within the ground truth's time span."""
    if not len(truth) or not len(other):
        return np.empty(0), np.empty(0), np.empty(0)
    keep = (other.t_s >= truth.t_s[0]) & (other.t_s <= truth.t_s[-1])
    t_s = other.t_s[keep]
    x_m, y_m, yaw = interp_pose(truth.t_s, t_s, truth.x_m, truth.y_m, truth.yaw_rad)
    return (t_s, np.hypot(other.x_m[keep] - x_m, other.y_m[keep] - y_m),
            wrap_angles(other.yaw_rad[keep] - yaw))


def localization_errors(run: RunData) -> LocalizationErrors:
    """Errors of the localization estimate and of odometry against the ground truth (linearly
    interpolated at their stamps; exact when the stamps match)."""
    return LocalizationErrors(*_pose_errors(run.ground_truth, run.estimate),
                              *_pose_errors(run.ground_truth, odom_in_map(run)))


def clearance_series(run: RunData) -> tuple[FloatArray, FloatArray]:
    """``(t_s, clearance_m)``: at each ground-truth stamp, the distance from the footprint at the
    true pose to the nearest obstacle cell of the recorded map (0 in contact). Empty without a
    map, a footprint or a ground truth."""
    truth = run.ground_truth
    if run.world is None or run.footprint is None or not len(truth):
        return np.empty(0), np.empty(0)
    poses = np.column_stack((truth.x_m, truth.y_m, truth.yaw_rad))
    return truth.t_s, clearances(run.world, run.footprint, poses)


def time_goal_reached_s(run: RunData, goal_tolerance_m: float,
                        goal_yaw_tolerance_rad: float | None = None) -> float | None:
    """Stamp from which the true pose stays within the tolerances of the goal (the last pose of
    :attr:`RunData.plan`) until the end of the run; None if it does not end there, or if it
    never left the goal's position tolerance while the plan does (a closed route the vehicle
    did not drive: a vehicle standing at its start has not reached the goal)."""
    goal, truth = run.plan, run.ground_truth
    if goal is None or not len(truth):
        return None
    within = np.hypot(truth.x_m - goal.poses.x_m[-1],
                      truth.y_m - goal.poses.y_m[-1]) <= goal_tolerance_m
    if goal_yaw_tolerance_rad is not None:
        heading = np.abs(wrap_angles(truth.yaw_rad - goal.poses.yaw_rad[-1]))
        within &= heading <= goal_yaw_tolerance_rad
    if not within[-1]:
        return None
    outside = np.flatnonzero(~within)
    if len(outside):
        return float(truth.t_s[outside[-1] + 1])
    poses = goal.poses
    leaves_m = np.hypot(poses.x_m - poses.x_m[-1], poses.y_m - poses.y_m[-1]).max()
    return None if leaves_m > goal_tolerance_m else float(truth.t_s[0])


def distance_errors_rel(dt_s: FloatArray, actual_vx_mps: FloatArray, actual_vy_mps: FloatArray,
                        command_vx_mps: FloatArray, command_vy_mps: FloatArray
                        ) -> dict[str, FloatArray]:
    """Relative errors of the distance travelled against the distance commanded, over
    intervals ``dt_s`` [s] in which each velocity [m/s] (body frame, base_link) is the one at
    the interval's start: ``|D_actual - D_commanded| / D_commanded`` with ``D`` the integral of
    the planar speed (``distance_error_rel``), of ``|vx|`` (``distance_error_x_rel``) and of
    ``|vy|`` (``distance_error_y_rel``, an omni base's sideways travel). Arrays of any shape
    ``(..., K)``; the results have the leading shape, NaN where nothing was commanded."""
    dt_s = np.asarray(dt_s, dtype=float)

    def error(actual: FloatArray, command: FloatArray) -> FloatArray:
        commanded = np.sum(np.abs(command) * dt_s, axis=-1)
        travelled = np.sum(np.abs(actual) * dt_s, axis=-1)
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.where(commanded > 0, np.abs(travelled - commanded) / commanded, np.nan)

    return {'distance_error_rel': error(np.hypot(actual_vx_mps, actual_vy_mps),
                                        np.hypot(command_vx_mps, command_vy_mps)),
            'distance_error_x_rel': error(actual_vx_mps, command_vx_mps),
            'distance_error_y_rel': error(actual_vy_mps, command_vy_mps)}


def _rms(values: FloatArray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(np.sqrt(np.mean(finite**2))) if len(finite) else None


def _max_abs(values: FloatArray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(np.max(np.abs(finite))) if len(finite) else None


def _last(values: FloatArray) -> float | None:
    return float(abs(values[-1])) if len(values) else None


def round_significant(value: float | int | None,
                      digits: int = SIGNIFICANT_DIGITS) -> float | int | None:
    """``value`` to ``digits`` significant digits; None for None and non-finite floats."""
    if value is None or isinstance(value, int):
        return value
    return float(f'{value:.{digits}g}') if math.isfinite(value) else None


def compute_metrics(run: RunData, goal_tolerance_m: float = DEFAULT_GOAL_TOLERANCE_M,
                    goal_yaw_tolerance_rad: float | None = None,
                    collisions_reported: bool = True) -> dict[str, float | int | None]:
    """The metrics named in :data:`METRIC_NAMES`, keyed in that order; None where the run
    lacks the data (no plan, no estimate, ...). Floats are rounded to
    :data:`SIGNIFICANT_DIGITS` digits, so the same run gives byte-identical JSON.

    ``goal_tolerance_m`` (and, if given, ``goal_yaw_tolerance_rad``) define reaching the goal
    for ``time_to_goal_s``. ``collisions_reported``: whether vehicle_sim reported its
    collisions (``world.collisions``); without, ``collisions`` is None (no message is no
    evidence of no contact).
    """
    if not goal_tolerance_m > 0:
        raise ValueError(f'goal_tolerance_m = {goal_tolerance_m!r}: must be > 0')
    tracking = tracking_errors(run)
    localization = localization_errors(run)
    truth, plan = run.ground_truth, run.plan
    distance_m = path_length_m(truth.x_m, truth.y_m)

    goal_position = goal_heading = time_to_goal = None
    if plan is not None and len(truth):
        goal_position = math.hypot(truth.x_m[-1] - plan.poses.x_m[-1],
                                   truth.y_m[-1] - plan.poses.y_m[-1])
        goal_heading = abs(float(wrap_angles(truth.yaw_rad[-1] - plan.poses.yaw_rad[-1])))
        reached_s = time_goal_reached_s(run, goal_tolerance_m, goal_yaw_tolerance_rad)
        if reached_s is not None:
            time_to_goal = max(0.0, reached_s - run.plans[0].received_s)

    actual, command = run.twist_actual, run.cmd_vel
    commanded = actual.t_s >= (command.t_s[0] if len(command) else math.inf)
    t_cmd = actual.t_s[commanded]

    def velocity_rms(actual_values: FloatArray, command_values: FloatArray) -> float | None:
        return _rms(hold_last(command.t_s, command_values, t_cmd) - actual_values[commanded])

    # The command in effect at each twist_actual sample, held to the next sample.
    held_vx, held_vy = (hold_last(command.t_s, values, t_cmd)
                        for values in (command.vx_mps, command.vy_mps))
    distance_errors = distance_errors_rel(
        np.diff(t_cmd), actual.vx_mps[commanded][:-1], actual.vy_mps[commanded][:-1],
        held_vx[:-1], held_vy[:-1])
    drift_end = _last(localization.odom_position_m)
    shape = None if plan is None else path_shape(plan.poses.x_m, plan.poses.y_m)
    _, clearance_m = clearance_series(run)
    finite_clearance = clearance_m[np.isfinite(clearance_m)]
    values = {
        'cross_track_rms_m': _rms(tracking.cross_track_m),
        'cross_track_max_m': _max_abs(tracking.cross_track_m),
        'heading_error_rms_rad': _rms(tracking.heading_rad),
        'goal_position_error_m': goal_position,
        'time_to_goal_s': time_to_goal,
        'localization_position_rms_m': _rms(localization.position_m),
        'heading_error_max_rad': _max_abs(tracking.heading_rad),
        'along_track_rms_m': _rms(tracking.along_track_m),
        'along_track_max_m': _max_abs(tracking.along_track_m),
        'goal_heading_error_rad': goal_heading,
        'localization_position_max_m': _max_abs(localization.position_m),
        'localization_heading_rms_rad': _rms(localization.heading_rad),
        'localization_heading_max_rad': _max_abs(localization.heading_rad),
        'odom_drift_end_m': drift_end,
        'odom_heading_drift_end_rad': _last(localization.odom_heading_rad),
        'odom_drift_per_distance': (drift_end / distance_m
                                    if drift_end is not None and distance_m > 0 else None),
        'cmd_vs_actual_vx_rms_mps': velocity_rms(actual.vx_mps, command.vx_mps),
        'cmd_vs_actual_vy_rms_mps': velocity_rms(actual.vy_mps, command.vy_mps),
        'cmd_vs_actual_wz_rms_radps': velocity_rms(actual.wz_radps, command.wz_radps),
        **{name: float(value) for name, value in distance_errors.items()},
        'distance_travelled_m': distance_m if len(truth) else None,
        'plans_received': len(run.plans),
        'plan_length_m': None if shape is None else shape.length_m,
        'plan_max_curvature_inv_m': None if shape is None else shape.max_curvature_inv_m,
        'plan_total_turning_rad': None if shape is None else shape.total_turning_rad,
        'collisions': (len(run.collisions) if run.world is not None and collisions_reported
                       and run.collisions_recorded else None),
        'min_clearance_m': float(finite_clearance.min()) if len(finite_clearance) else None,
    }
    return {name: round_significant(values[name]) for name in METRIC_NAMES}
