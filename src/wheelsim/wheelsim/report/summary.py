"""The one-screen text summary printed at the end of ``wheelsim run``.

Formats the dict of :func:`wheelsim.report.metrics.compute_metrics` (angles shown in degrees),
the run's timing and, if the scenario has them, its pass criteria with their verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

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


def passes(value: Value, bound: float) -> bool:
    """A pass criterion: the metric exists and is at most ``bound`` (missing data fails)."""
    return value is not None and value <= bound


def format_summary(metrics: Mapping[str, Value], timing: Mapping[str, float] | None = None,
                   pass_criteria: Mapping[str, float] | None = None,
                   output_dir: Path | str | None = None) -> str:
    """A small table (about 15 lines) of the main metrics, then the pass criteria if any.

    ``timing``: ``wall_time_s``, ``simulated_time_s`` and ``real_time_factor`` (any missing key
    is left out); ``pass_criteria``: upper bounds by metric name.
    """
    lines = []
    if timing:
        parts = []
        if 'simulated_time_s' in timing:
            parts.append(f'{timing["simulated_time_s"]:.1f} s simulated')
        if 'wall_time_s' in timing:
            parts.append(f'in {timing["wall_time_s"]:.2f} s wall time')
        if 'real_time_factor' in timing:
            parts.append(f'({timing["real_time_factor"]:.0f}x real time)')
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
        for key, bound in pass_criteria.items():
            verdict = 'pass' if passes(m.get(key), bound) else 'FAIL'
            lines.append(f'  {key:<{width}}  {_number(m.get(key))} <= {bound:.4g}  {verdict}')
    if output_dir is not None:
        lines.append(f'results: {output_dir}')
    return '\n'.join(lines)
