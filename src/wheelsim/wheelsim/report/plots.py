"""Figures of a run: one PNG per figure and all of them as pages of one PDF.

matplotlib with the Agg canvas (no display, no pyplot state). Positions in metres, velocities
in m/s and rad/s, angles shown in degrees. A figure whose data is missing from the bag still gets
its page, saying what is missing, so the PDF always has :data:`PAGE_NAMES` pages in that order.
matplotlib is imported by :func:`write_plots`, not with this module: a run without plots (each
point of a sweep) does not pay for its import (0.3-0.4 s).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wheelsim.report.bag_data import RunData
from wheelsim.report.metrics import (
    clearance_series,
    localization_errors,
    odom_in_map,
    tracking_errors,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from wheelsim.core.world.occupancy import OccupancyMap

PDF_NAME = 'report.pdf'
PNG_DPI = 100
FIGURE_SIZE_IN = (9.0, 6.5)
COLORS = {'plan': 'black', 'true': 'tab:blue', 'estimate': 'tab:orange', 'odom': 'tab:green',
          'command': 'tab:red', 'actual': 'tab:blue'}


def _no_data(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha='center', va='center', transform=ax.transAxes, fontsize=13,
            color='gray')
    ax.set_xticks([])
    ax.set_yticks([])


def _time_axes(fig: Figure, rows: int) -> list[Axes]:
    axes = list(fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0])
    for ax in axes:
        ax.grid(True, alpha=0.4)
    axes[-1].set_xlabel('simulated time [s]')
    return axes


def _legend(ax: Axes) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc='best', fontsize='small')


MAP_COLORS = ('#eeeeee', 'white', '#444444')  # unknown, free, obstacle


def draw_map(ax: Axes, world: OccupancyMap | None) -> None:
    """The map under the paths (obstacles dark, unknown light grey), placed by its origin
    (rotation included); nothing for None."""
    from matplotlib.colors import ListedColormap

    if world is None:
        return
    classes = np.where(world.obstacles, 2, np.where(world.values < 0, 0, 1))
    cols, rows = np.meshgrid(np.arange(world.width + 1), np.arange(world.height + 1))
    x_m, y_m = world.to_map(cols, rows)  # cell corners, rotation included
    ax.pcolormesh(x_m, y_m, classes, cmap=ListedColormap(MAP_COLORS), vmin=0, vmax=2,
                  shading='flat', rasterized=True, zorder=0)


def _draw_world_events(ax: Axes, run: RunData) -> None:
    """Collisions (red crosses) and the footprint where the clearance was smallest."""
    if len(run.collisions):
        ax.plot(run.collisions.x_m, run.collisions.y_m, 'x', color='red', ms=10, mew=2,
                label=f'collision ({len(run.collisions)})', zorder=6)
    t_s, clearance_m = clearance_series(run)
    if not len(t_s) or not np.isfinite(clearance_m).any():
        return
    i = int(np.nanargmin(np.where(np.isfinite(clearance_m), clearance_m, np.nan)))
    truth = run.ground_truth
    corners = run.footprint.in_map(truth.x_m[i], truth.y_m[i], truth.yaw_rad[i])
    closed = np.vstack([corners, corners[:1]])
    ax.plot(closed[:, 0], closed[:, 1], color='darkorange', lw=1.5, zorder=5,
            label=f'footprint at the minimum clearance ({clearance_m[i]:.3g} m)')


def plot_xy(fig: Figure, run: RunData) -> None:
    """Paths in ``map`` over the recorded map: plans (the latest solid), true, estimated,
    odometry; start and goal; collisions and the footprint at the minimum clearance."""
    ax = fig.subplots()
    draw_map(ax, run.world)
    latest = run.plan
    earlier = [p for p in run.plans if len(p.poses) and p is not latest]
    for i, plan in enumerate(earlier):
        ax.plot(plan.poses.x_m, plan.poses.y_m, '--', color='gray', lw=1,
                label='earlier plans' if i == 0 else None)
    if latest is not None:
        ax.plot(latest.poses.x_m, latest.poses.y_m, color=COLORS['plan'], lw=1.5,
                label='reference (plan)', zorder=3)
    # Drawn under the plan: the (often noisy) estimate and odometry; over it: the true path.
    series = [(run.estimate, 'estimate', 'estimated path (pose)', 1, 0.8),
              (odom_in_map(run), 'odom', 'odometry (aligned at start)', 2, 1.2),
              (run.ground_truth, 'true', 'true path (ground_truth)', 4, 1.5)]
    for poses, name, label, zorder, width in series:
        if len(poses):
            ax.plot(poses.x_m, poses.y_m, ':' if name == 'odom' else '-', color=COLORS[name],
                    lw=width, label=label, zorder=zorder)
    if len(run.ground_truth):
        ax.plot(run.ground_truth.x_m[0], run.ground_truth.y_m[0], 'o', ms=9, mfc='none',
                mec='green', mew=2, label='start', zorder=5)
    _draw_world_events(ax, run)
    if not ax.lines:
        _no_data(ax, 'no paths recorded')
        return
    if latest is not None:
        goal = latest.poses
        ax.plot(goal.x_m[-1], goal.y_m[-1], '*', ms=14, color='red', label='goal', zorder=5)
        # as long as the star is wide at least, on a plot of any size
        arrow_m = max(GOAL_ARROW_MIN_M, GOAL_ARROW_SHARE * _paths_span_m(ax))
        ax.annotate('', xy=(goal.x_m[-1] + arrow_m * np.cos(goal.yaw_rad[-1]),
                            goal.y_m[-1] + arrow_m * np.sin(goal.yaw_rad[-1])),
                    xytext=(goal.x_m[-1], goal.y_m[-1]),
                    arrowprops={'arrowstyle': '-|>', 'color': 'red', 'lw': 1.5}, zorder=6)
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_xlabel('x [m] (map)')
    ax.set_ylabel('y [m] (map)')
    ax.grid(True, alpha=0.4)
    # beside the map, not over it: wherever it goes inside, some runs have walls there
    ax.legend(loc='upper left', bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
              fontsize='small')


#: The goal's heading arrow: this share of the paths' larger extent, at least this long.
GOAL_ARROW_SHARE = 0.08
GOAL_ARROW_MIN_M = 0.3


def _paths_span_m(ax: Axes) -> float:
    """The larger side of the box around every line drawn on ``ax`` [m]."""
    points = np.vstack([line.get_xydata() for line in ax.lines])
    return float(np.ptp(points, axis=0).max())


def plot_velocities(fig: Figure, run: RunData) -> None:
    """Commanded (``cmd_vel``, held until the next) vs actual (``twist_actual``) body twist."""
    components = [('vx_mps', 'vx [m/s]'), ('vy_mps', 'vy [m/s]'), ('wz_radps', 'wz [rad/s]')]
    axes = _time_axes(fig, 3)
    for ax, (field, label) in zip(axes, components, strict=True):
        if len(run.cmd_vel):
            ax.step(run.cmd_vel.t_s, getattr(run.cmd_vel, field), where='post',
                    color=COLORS['command'], lw=1, label='commanded (cmd_vel)')
        if len(run.twist_actual):
            ax.plot(run.twist_actual.t_s, getattr(run.twist_actual, field),
                    color=COLORS['actual'], lw=1, label='actual (twist_actual)')
        ax.set_ylabel(label)
        _legend(ax)
    if not len(run.cmd_vel) and not len(run.twist_actual):
        _no_data(axes[1], 'no cmd_vel or twist_actual recorded')


def _plot_joints(fig: Figure, run: RunData, names: tuple[str, ...], velocity: bool,
                 missing: str) -> None:
    ax = _time_axes(fig, 1)[0]
    joints = run.joints
    for name in names:
        values = joints.velocity if velocity else np.degrees(joints.position)
        ax.plot(joints.t_s, values[:, joints.column(name)], lw=1, label=name)
    if not names:
        _no_data(ax, missing if len(joints.t_s) else 'no joint_states recorded')
        return
    ax.set_ylabel('wheel speed [rad/s]' if velocity else 'steering angle [deg]')
    _legend(ax)


def plot_wheel_speeds(fig: Figure, run: RunData) -> None:
    """Angular velocity of every wheel joint (``joint_states``)."""
    _plot_joints(fig, run, run.joints.wheel_names, True, 'no wheel joints in joint_states')


def plot_steering(fig: Figure, run: RunData) -> None:
    """Angle of every steering joint (names containing 'steer')."""
    _plot_joints(fig, run, run.joints.steering_names, False,
                 'no steering joints (this vehicle model has none)')


def plot_tracking_errors(fig: Figure, run: RunData) -> None:
    """True pose vs the plan over time; the controller's own errors if it published them."""
    errors = tracking_errors(run)
    reported = run.tracking_error
    axes = _time_axes(fig, 4 if reported.columns else 3)
    rows = [(errors.cross_track_m, 'cross-track [m]\n(left > 0)'),
            (np.degrees(errors.heading_rad), 'heading [deg]'),
            (errors.along_track_m, 'along-track [m]\n(ahead > 0)')]
    for ax, (values, label) in zip(axes, rows, strict=False):
        ax.plot(errors.t_s, values, color=COLORS['true'], lw=1, label='true pose vs plan')
        ax.axhline(0.0, color='black', lw=0.6)
        ax.set_ylabel(label)
    if not len(errors.t_s):
        _no_data(axes[0], 'no plan or no ground truth recorded')
    if reported.columns:
        _plot_reported_errors(axes[3], reported.t_s, reported.columns)


#: The fields of the controller's ``tracking_error`` (geometry_msgs/Vector3Stamped) in metres,
#: and its heading error [rad], drawn in degrees on an axis of its own.
REPORTED_METRES = {'vector.x': 'along-track (x)', 'vector.y': 'cross-track (y)'}
REPORTED_HEADING = 'vector.z'


def _plot_reported_errors(ax: Axes, t_s: np.ndarray, columns: dict[str, np.ndarray]) -> None:
    """The controller's own errors: along- and cross-track in metres, the heading in degrees
    on the right; any other message's fields as they are, named."""
    if set(columns) != {*REPORTED_METRES, REPORTED_HEADING}:
        for name, values in columns.items():
            ax.plot(t_s, values, lw=1, label=name)
        ax.set_ylabel('controller\n(tracking_error)')
        _legend(ax)
        return
    for name, label in REPORTED_METRES.items():
        ax.plot(t_s, columns[name], lw=1, label=label)
    ax.set_ylabel('controller\n(tracking_error) [m]')
    right = ax.twinx()
    right.plot(t_s, np.degrees(columns[REPORTED_HEADING]), lw=1, color='tab:green',
               label='heading (z)')
    right.set_ylabel('heading [deg]')
    lines = ax.get_lines() + right.get_lines()
    ax.legend(lines, [line.get_label() for line in lines], loc='best', fontsize='small')


def plot_localization_errors(fig: Figure, run: RunData) -> None:
    """Localization estimate and aligned odometry vs ground truth over time."""
    errors = localization_errors(run)
    axes = _time_axes(fig, 2)
    series = [(errors.t_s, errors.position_m, errors.heading_rad, '-', 'estimate',
               'estimate (pose)'),
              (errors.odom_t_s, errors.odom_position_m, errors.odom_heading_rad, ':', 'odom',
               'odometry (aligned at start)')]
    for t_s, position, heading, style, color, label in series:
        if len(t_s):
            axes[0].plot(t_s, position, style, color=COLORS[color], lw=1.2, label=label)
            axes[1].plot(t_s, np.degrees(heading), style, color=COLORS[color], lw=1.2,
                         label=label)
    axes[0].set_ylabel('position error [m]')
    axes[1].set_ylabel('heading error [deg]')
    for ax in axes:
        _legend(ax)
        if not ax.lines:
            _no_data(ax, 'no ground truth, or neither pose nor odom recorded')


def plot_clearance(fig: Figure, run: RunData) -> None:
    """Distance from the footprint to the nearest obstacle over time; collision times."""
    ax = _time_axes(fig, 1)[0]
    t_s, clearance_m = clearance_series(run)
    if not len(t_s):
        missing = [what for what, absent in (('map', run.world is None),
                                             ('footprint', run.footprint is None),
                                             ('ground truth', not len(run.ground_truth)))
                   if absent]
        listed = ', '.join(missing[:-1]) + ' or ' * (len(missing) > 1) + missing[-1]
        _no_data(ax, f'no {listed} recorded')
        return
    ax.plot(t_s, clearance_m, color=COLORS['true'], lw=1, label='clearance (true pose)')
    for i, t in enumerate(run.collisions.t_s):
        ax.axvline(t, color='red', lw=1, label='collision' if i == 0 else None)
    ax.axhline(0.0, color='black', lw=0.6)
    ax.set_ylabel('clearance [m]')
    _legend(ax)


PAGES: dict[str, tuple[str, Callable[[Figure, RunData], None]]] = {
    'xy_paths': ('Paths in the map frame', plot_xy),
    'velocities': ('Commanded vs actual body velocity', plot_velocities),
    'wheel_speeds': ('Wheel speeds', plot_wheel_speeds),
    'steering': ('Steering angles', plot_steering),
    'tracking_errors': ('Tracking errors: true pose vs reference plan', plot_tracking_errors),
    'localization_errors': ('Localization errors vs ground truth', plot_localization_errors),
    'clearance': ('Clearance of the footprint to the map\'s obstacles', plot_clearance),
}
PAGE_NAMES = tuple(PAGES)
"""The figures, in PDF page order; each is also written as ``<name>.png``."""


def write_plots(run: RunData, out_dir: Path | str, title: str) -> list[Path]:
    """Draw every figure of :data:`PAGES` into ``out_dir`` (created if needed).

    Writes ``<name>.png`` per figure and ``report.pdf`` with one page per figure, each titled
    ``title: <figure title>``. Returns the paths written, PNGs first, the PDF last. A write
    that fails (a full disk) raises OSError naming the file, which is removed, as is the PDF
    (without its end it is no PDF); the PNGs written before it stay. An interrupt
    (KeyboardInterrupt) removes the same two and goes on: closed early, the PDF would look
    complete with fewer pages.
    """
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    pdf_path = current = out / PDF_NAME
    try:
        with PdfPages(pdf_path, metadata={'Title': title, 'Creator': 'wheelsim',
                                          'CreationDate': None}) as pdf:
            for name, (figure_title, draw) in PAGES.items():
                fig = Figure(figsize=FIGURE_SIZE_IN, layout='constrained')
                fig.suptitle(f'{title}: {figure_title}')
                draw(fig, run)
                current = out / f'{name}.png'
                fig.savefig(current, dpi=PNG_DPI)
                fig.set_layout_engine('none')  # the page keeps the PNG's layout: laid out once
                current = pdf_path
                pdf.savefig(fig)
                written.append(out / f'{name}.png')
    except (OSError, KeyboardInterrupt) as err:
        for path in {current, pdf_path}:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        if isinstance(err, KeyboardInterrupt):
            raise
        raise OSError(err.errno, f'{err.strerror or err}: {current} not written') from err
    return [*written, pdf_path]
