"""The one-screen text summary printed at the end of ``wheelsim run``.

Formats the dict of :func:`wheelsim.report.metrics.compute_metrics` (angles shown in degrees),
the run's timing and, if the scenario has them, its pass criteria with their verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from wheelsim.report.metrics import LARGER_IS_BETTER, round_significant

Value = float | int | None
_DEG = 180.0 / math.pi


def _number(value: Value, unit: str = '', scale: float = 1.0) -> str:
    if value is None:
        return '-'
    text = f'{value * scale:.4g}'
    return f'{text} {unit}' if unit else text


def _pair(metrics: Mapping[str, Value], first: str, second: str, unit: str,
          scale: float = 1.0) -> str:
    return (f'{_number(metrics.get(first), scale=scale)} / '
            f'{_number(metrics.get(second), scale=scale)} {unit}')


def _goal_time(metrics: Mapping[str, Value]) -> str:
    if metrics.get('plans_received', 0) == 0:
        return '- (no plan)'
    time_s = metrics.get('time_to_goal_s')
    return 'not reached' if time_s is None else _number(time_s, 's')


def _drift(metrics: Mapping[str, Value]) -> str:
    drift = _number(metrics.get('odom_drift_end_m'), 'm')
    ratio = metrics.get('odom_drift_per_distance')
    if ratio is not None:
        drift += f' ({100 * ratio:.3g} % of {_number(metrics.get("distance_travelled_m"), "m")})'
    return f'{drift}, {_number(metrics.get("odom_heading_drift_end_rad"), "deg", _DEG)}'


def criterion_excess(metric: str, value: float, bound: float) -> float:
    """How far ``value`` of ``metric`` is past the pass criterion's ``bound`` (<= 0: it holds).
    The bound is an upper bound (``value - bound``), but for the metrics in
    :data:`~wheelsim.report.metrics.LARGER_IS_BETTER`, where it is a lower bound
    (``bound - value``)."""
    return bound - value if metric in LARGER_IS_BETTER else value - bound


def passes(metric: str, value: Value, bound: float) -> bool:
    """A pass criterion: ``metric`` has a ``value`` (missing data fails) and it is within
    ``bound`` (:func:`criterion_excess`)."""
    return value is not None and criterion_excess(metric, value, bound) <= 0


def _criterion(metric: str, value: Value, bound: float) -> str:
    relation = '>=' if metric in LARGER_IS_BETTER else '<='
    verdict = 'pass' if passes(metric, value, bound) else 'FAIL'
    return f'{_number(value)} {relation} {bound:.4g}  {verdict}'


def format_summary(metrics: Mapping[str, Value], timing: Mapping[str, float] | None = None,
                   pass_criteria: Mapping[str, float] | None = None,
                   output_dir: Path | str | None = None) -> str:
    """A small table (about 15 lines) of the main metrics, then the pass criteria if any.

    ``timing``: ``wall_time_s``, ``simulated_time_s`` and ``real_time_factor`` (any missing key
    is left out); ``pass_criteria``: bounds by metric name (:func:`passes`).
    """
    lines = []
    if timing:
        parts = []
        if 'simulated_time_s' in timing:
            parts.append(f'{timing["simulated_time_s"]:.1f} s simulated')
        if 'wall_time_s' in timing:
            parts.append(f'in {timing["wall_time_s"]:.2f} s wall time')
        if 'real_time_factor' in timing:
            factor = timing['real_time_factor']
            if timing.get('wall_time_s') and 'simulated_time_s' in timing:
                # Not timing.json's 3 digits rounded again (105.26 -> 105 -> 100, not 110):
                # from the times, where their rounding to the ms leaves those 3 digits.
                exact = timing['simulated_time_s'] / timing['wall_time_s']
                factor = exact if round_significant(exact, 3) == factor else factor
            factor = round_significant(factor, 2)  # 0.04 stays 0.04
            shown = f'{factor:,.0f}' if factor >= 100 else f'{factor:g}'  # 1.2e+06: 1,200,000
            parts.append(f'({shown}x real time)')
        lines.append('run: ' + ' '.join(parts))
    m = metrics
    rows = [
        ('tracking', 'cross-track RMS / max',
         _pair(m, 'cross_track_rms_m', 'cross_track_max_m', 'm')),
        ('', 'heading RMS / max',
         _pair(m, 'heading_error_rms_rad', 'heading_error_max_rad', 'deg', _DEG)),
        ('', 'along-track RMS / max', _pair(m, 'along_track_rms_m', 'along_track_max_m', 'm')),
        ('goal', 'final error',
         f'{_number(m.get("goal_position_error_m"), "m")}, '
         f'{_number(m.get("goal_heading_error_rad"), "deg", _DEG)}'),
        ('', 'time to goal', _goal_time(m)),
        ('localization', 'position RMS / max',
         _pair(m, 'localization_position_rms_m', 'localization_position_max_m', 'm')),
        ('', 'heading RMS / max',
         _pair(m, 'localization_heading_rms_rad', 'localization_heading_max_rad', 'deg', _DEG)),
        ('', 'odometry drift at end', _drift(m)),
        ('velocity', 'cmd - actual RMS vx, vy, wz',
         f'{_number(m.get("cmd_vs_actual_vx_rms_mps"), "m/s")}, '
         f'{_number(m.get("cmd_vs_actual_vy_rms_mps"), "m/s")}, '
         f'{_number(m.get("cmd_vs_actual_wz_rms_radps"), "rad/s")}'),
        ('plans', 'received', _number(m.get('plans_received'))),
        ('', 'length, max curvature',
         f'{_number(m.get("plan_length_m"), "m")}, '
         f'{_number(m.get("plan_max_curvature_inv_m"), "1/m")}'),
        ('', 'total turning', _number(m.get('plan_total_turning_rad'), 'rad')),
        ('world', 'collisions, min clearance',
         f'{_number(m.get("collisions"))}, {_number(m.get("min_clearance_m"), "m")}'),
    ]
    group_width = max(len(r[0]) for r in rows)
    label_width = max(len(r[1]) for r in rows)
    lines += [f'  {g:<{group_width}}  {label:<{label_width}}  {value}' for g, label, value in rows]
    if pass_criteria:
        lines.append('pass criteria:')
        width = max(len(k) for k in pass_criteria)
        lines += [f'  {key:<{width}}  {_criterion(key, m.get(key), bound)}'
                  for key, bound in pass_criteria.items()]
    if output_dir is not None:
        lines.append(f'results: {output_dir}')
    return '\n'.join(lines)
