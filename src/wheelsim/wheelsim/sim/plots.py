"""Figures of a :class:`~wheelsim.sim.rollout.Trajectory` on matplotlib (no pyplot state).

Each function returns a new ``matplotlib.figure.Figure`` and shows nothing: display it in a
notebook, or ``fig.savefig('name.png')``. Positions in m, speeds in m/s and rad/s, angles in
rad. A batch's vehicles are all drawn.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.geometry.angles import wrap_angles
from wheelsim.core.vehicle.model import joint_columns
from wheelsim.report.plots import draw_map
from wheelsim.sim.rollout import Trajectory, real_floats, real_number
from wheelsim.sim.vehicle import SimVehicle, check_vehicle

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _figure(rows: int = 1, height_in: float = 4.0) -> tuple[Figure, list]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, height_in * rows), layout='constrained')
    return fig, [fig.add_subplot(rows, 1, row + 1) for row in range(rows)]


def _check_trajectory(trajectory: object) -> Trajectory:
    """``trajectory`` if it is a :class:`Trajectory`; ValueError naming the argument otherwise
    (the arrays or a vehicle where :func:`~wheelsim.sim.rollout.simulate`'s result belongs)."""
    if not isinstance(trajectory, Trajectory):
        given = ' '.join(repr(trajectory).split())  # one line, as an array's repr is not
        raise ValueError(f'trajectory must be a Trajectory (ws.simulate(...) or '
                         f'ws.rollout(...)), got {type(trajectory).__name__} {given:.60}')
    return trajectory


def _vehicles(trajectory: Trajectory) -> list[Trajectory]:
    if trajectory.x_m.ndim == 1:
        return [trajectory]
    return [trajectory.vehicle(i) for i in range(trajectory.x_m.shape[0])]


def _reference(reference: ArrayLike, samples: int | None) -> np.ndarray:
    """``reference`` as an (M, 2) or (M, 3) float array, M = ``samples`` (None: any M >= 1);
    ValueError naming it otherwise."""
    rows = 'M' if samples is None else str(samples)
    where = 'a path' if samples is None else 'at every sample of the trajectory'
    try:  # no text, bool, complex or masked value, no ragged rows
        array = real_floats(reference, 'reference', 'x_m, y_m[, yaw_rad]')
        got = f'shape {array.shape}'
    except ValueError:
        array, got = np.zeros(0), 'no array of real numbers'
    if array.ndim != 2 or not array.shape[0] or array.shape[0] != (samples or array.shape[0]) \
            or array.shape[1] not in (2, 3):
        raise ValueError(f'reference must have shape ({rows}, 2) or ({rows}, 3) (x_m, y_m[, '
                         f'yaw_rad] {where}), got {got}')
    if not np.all(np.isfinite(array)):
        raise ValueError('reference must be finite (x_m, y_m[, yaw_rad]), got '
                         f'{np.count_nonzero(~np.isfinite(array).all(axis=1))} of {len(array)} '
                         'rows with NaN or infinity')
    return array


def plot_trajectory(trajectory: Trajectory, vehicle: SimVehicle, footprint_every_s: float = 1.0,
                    reference: ArrayLike | None = None) -> Figure:
    """The path of base_link in map, with the vehicle's footprint drawn every
    ``footprint_every_s`` seconds (a finite number > 0; and at the end), the map when the
    vehicle has one, and an optional ``reference`` path ((M, 2) or (M, 3): x_m, y_m[,
    yaw_rad], finite). ValueError naming an argument that is none of these, or a vehicle
    whose joints are not the trajectory's (another kind of vehicle)."""
    _check_trajectory(trajectory)
    check_vehicle(vehicle)
    drove = joint_columns(vehicle.config).names
    if tuple(trajectory.joint_names) != tuple(drove):
        raise ValueError(f'vehicle must be of the kind that drove the trajectory: its joints '
                         f'are {", ".join(drove)}, the trajectory\'s '
                         f'{", ".join(trajectory.joint_names)}')
    if not 0.0 < real_number(footprint_every_s) < math.inf:
        raise ValueError(f'footprint_every_s = {footprint_every_s!r} must be a finite number '
                         '> 0 [s]')
    path = None if reference is None else _reference(reference, None)
    fig, (ax,) = _figure()
    draw_map(ax, vehicle.world)
    if path is not None:
        ax.plot(path[:, 0], path[:, 1], 'k--', lw=1.0, label='reference')
    # a Python float: a huge footprint_every_s over it is inf, without numpy's overflow warning
    period_s = float(trajectory.t_s[1] - trajectory.t_s[0]) if len(trajectory.t_s) > 1 else 1.0
    # at most every sample count apart (a huge period: the first and the last footprints)
    every = max(1, round(min(float(footprint_every_s) / period_s, len(trajectory.t_s))))
    for i, run in enumerate(_vehicles(trajectory)):
        line, = ax.plot(run.x_m, run.y_m, lw=1.2, label='base_link' if i == 0 else None)
        for k in sorted({*range(0, len(run.t_s), every), len(run.t_s) - 1}):
            corners = vehicle.footprint.in_map(run.x_m[k], run.y_m[k], run.yaw_rad[k])
            ax.fill(corners[:, 0], corners[:, 1], fill=False, ec=line.get_color(), lw=0.6)
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_xlabel('x [m]')
    ax.set_ylabel('y [m]')
    ax.set_title(f'{vehicle.model} vehicle: path and footprint every {every * period_s:g} s')
    ax.legend(loc='best')
    return fig


def plot_speeds(trajectory: Trajectory) -> Figure:
    """Body twist (vx, vy [m/s], wz [rad/s]) with the commanded twist, and the wheel speeds
    [rad/s] over time. ValueError for a ``trajectory`` that is no :class:`Trajectory`."""
    _check_trajectory(trajectory)
    fig, (twist_ax, wheel_ax) = _figure(2, 3.0)
    t_s = trajectory.t_s
    for run in _vehicles(trajectory):
        for name, values, column in (('vx [m/s]', run.vx_mps, 0), ('vy [m/s]', run.vy_mps, 1),
                                     ('wz [rad/s]', run.wz_radps, 2)):
            line, = twist_ax.plot(t_s, values, label=name)
            twist_ax.step(t_s[:-1], run.command_twist[:, column], where='post', ls=':',
                          color=line.get_color(), label=f'commanded {name}')
        for j in range(run.wheel_speed_radps.shape[1]):
            wheel_ax.plot(t_s, run.wheel_speed_radps[:, j], label=run.joint_names[j])
    twist_ax.set_ylabel('body twist')
    wheel_ax.set_ylabel('wheel speed [rad/s]')
    wheel_ax.set_xlabel('t [s]')
    for ax in (twist_ax, wheel_ax):
        if len(_vehicles(trajectory)) == 1:
            ax.legend(loc='best', fontsize='small')
    return fig


def plot_tracking_errors(trajectory: Trajectory, reference: ArrayLike) -> Figure:
    """Errors against ``reference`` ((K+1, 2) or (K+1, 3): x_m, y_m[, yaw_rad] at every
    sample): the position error [m] and, with a yaw, the heading error [rad], over time.
    ValueError naming an argument that is none of these."""
    samples = len(_check_trajectory(trajectory).t_s)
    wanted = _reference(reference, samples)
    fig, axes = _figure(2 if wanted.shape[1] == 3 else 1, 3.0)
    for run in _vehicles(trajectory):
        axes[0].plot(run.t_s, np.hypot(run.x_m - wanted[:, 0], run.y_m - wanted[:, 1]))
        if wanted.shape[1] == 3:
            axes[1].plot(run.t_s, wrap_angles(run.yaw_rad - wanted[:, 2]))
    axes[0].set_ylabel('position error [m]')
    if wanted.shape[1] == 3:
        axes[1].set_ylabel('heading error [rad]')
    axes[-1].set_xlabel('t [s]')
    return fig
