"""Run plots (wheelsim.report.plots): PNG per figure, one PDF page per figure, any bag."""

import re

import numpy as np
import pytest
from matplotlib.image import imread
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from test_report_bag_data import (
    odometry,
    pose_estimate,
    set_stamp,
    straight_run,
    twist_stamped,
    write_bag,
)

from wheelsim.report.bag_data import load_run
from wheelsim.report.plots import PAGE_NAMES, PDF_NAME, write_plots


def full_run():
    """Every topic the report reads: a straight run with estimate, odometry, commands,
    actual twist, four wheels and two steering joints, and controller tracking errors."""
    records = straight_run(offset_m=0.05, delay_s=0.2)
    names = ['front_left_steer_joint', 'front_right_steer_joint', 'front_left_wheel_joint',
             'front_right_wheel_joint', 'rear_left_wheel_joint', 'rear_right_wheel_joint']
    for t in np.arange(0, 601) / 50:
        x = min(max(t - 0.2, 0.0), 10.0)
        records.append(('/pose', pose_estimate(t, x + 0.02 * np.sin(t), 0.05, 0.01), t))
        records.append(('/odom', odometry(t, 1.01 * x, 0.0, 0.0, frame='odom'), t))
        records.append(('/twist_actual', twist_stamped(t, vx=1.0 if 0.2 < t < 10.2 else 0.0), t))
        steer = 0.1 * np.sin(t)
        joints = JointState(name=names, position=[steer, steer, *([x / 0.1] * 4)],
                            velocity=[0.0, 0.0, *([10.0] * 4)])
        set_stamp(joints.header, t)
        records.append(('/joint_states', joints, t))
        records.append(('/tracking_error', Float64MultiArray(data=[0.05, 0.0, -0.2]), t))
    records += [('/cmd_vel', twist_stamped(0.1 * i, vx=1.0 if i < 100 else 0.0), 0.1 * i)
                for i in range(120)]
    return records


def pdf_page_count(path):
    return len(re.findall(rb'/Type\s*/Page[^s]', path.read_bytes()))


@pytest.mark.parametrize('records', [full_run(), straight_run(), []],
                         ids=['all_topics', 'plan_and_truth_only', 'empty_bag'])
def test_every_figure_written_as_png_and_pdf_page(tmp_path, records):
    run = load_run(write_bag(tmp_path / 'bag', records))
    paths = write_plots(run, tmp_path / 'plots', title='test run')
    assert [p.name for p in paths] == [f'{n}.png' for n in PAGE_NAMES] + [PDF_NAME]
    assert len(PAGE_NAMES) == 7
    for png in paths[:-1]:
        assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
        image = imread(png)
        assert image.shape[0] >= 500 and image.shape[1] >= 700
        assert image[..., :3].std() > 0.01, f'{png.name} is blank'
    assert pdf_page_count(paths[-1]) == len(PAGE_NAMES)


def test_pdf_of_a_real_page_count_check_fails_on_fewer_pages(tmp_path):
    """The page counter tells a one-page PDF from a six-page one (so the test above can fail)."""
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    with PdfPages(tmp_path / 'one.pdf') as pdf:
        pdf.savefig(Figure())
    assert pdf_page_count(tmp_path / 'one.pdf') == 1


@pytest.mark.parametrize('records, said', [
    (straight_run(), 'no map or footprint recorded'),
    ([], 'no map, footprint or ground truth recorded'),
])
def test_the_clearance_plot_names_what_is_missing(tmp_path, records, said):
    """Found in review: a run with ground truth and a footprint but no map was told that none
    of the three was recorded."""
    from matplotlib.figure import Figure

    from wheelsim.report.plots import plot_clearance

    figure = Figure()
    plot_clearance(figure, load_run(write_bag(tmp_path / 'bag', records)))
    assert [text.get_text() for text in figure.axes[0].texts] == [said]


def test_an_interrupt_leaves_no_pdf_that_looks_complete(tmp_path, monkeypatch):
    """Found in review: Ctrl-C while the figures were drawn closed report.pdf early, a
    well-formed PDF of the pages so far, where the docs promise all seven."""
    from wheelsim.report import plots

    def interrupted(_fig, _run):
        raise KeyboardInterrupt

    title, _ = plots.PAGES['localization_errors']
    monkeypatch.setitem(plots.PAGES, 'localization_errors', (title, interrupted))
    with pytest.raises(KeyboardInterrupt):
        write_plots(load_run(write_bag(tmp_path / 'bag', straight_run())), tmp_path / 'plots',
                    title='test run')
    written = sorted(path.name for path in (tmp_path / 'plots').iterdir())
    assert written == sorted(f'{name}.png' for name in PAGE_NAMES[:PAGE_NAMES.index(
        'localization_errors')])


def test_the_xy_legend_is_beside_the_map_and_the_goal_arrow_grows_with_the_plot(tmp_path):
    """Found in review: the legend hid a pillar and a wall corner of the map, and on a 12 m
    plot the goal's 0.3 m heading arrow hid under its star."""
    from matplotlib.figure import Figure

    from wheelsim.report.plots import GOAL_ARROW_SHARE, plot_xy

    figure = Figure(layout='constrained')
    plot_xy(figure, load_run(write_bag(tmp_path / 'bag', full_run())))
    figure.canvas.draw()
    ax = figure.axes[0]
    assert not ax.get_legend().get_window_extent().overlaps(ax.get_window_extent())
    (arrow,) = ax.texts
    length_m = np.hypot(*np.subtract(arrow.xy, arrow.xyann))
    assert length_m == pytest.approx(GOAL_ARROW_SHARE * 10.0, rel=0.05)  # the run is 10 m


def test_the_controller_s_heading_error_is_drawn_in_degrees_on_its_own_axis(tmp_path):
    """Found in review: the controller's along- and cross-track errors [m] and its heading
    error [rad] shared one axis without a unit."""
    from geometry_msgs.msg import Vector3Stamped
    from matplotlib.figure import Figure

    from wheelsim.report.plots import plot_tracking_errors

    records = straight_run()
    for t in np.arange(0, 101) / 10:
        error = Vector3Stamped()
        set_stamp(error.header, t)
        error.vector.x, error.vector.y, error.vector.z = 0.05, -0.02, 0.1
        records.append(('/tracking_error', error, t))
    figure = Figure()
    plot_tracking_errors(figure, load_run(write_bag(tmp_path / 'bag', records)))
    metres, degrees = figure.axes[3], figure.axes[4]
    assert metres.get_ylabel().endswith('[m]') and degrees.get_ylabel() == 'heading [deg]'
    assert [line.get_ydata()[0] for line in metres.get_lines()] == [0.05, -0.02]
    assert degrees.get_lines()[0].get_ydata()[0] == pytest.approx(np.degrees(0.1))
