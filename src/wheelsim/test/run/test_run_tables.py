"""Sweep results: CSV and Parquet tables, worst runs, plots, and the seed robustness summary."""

import csv

import numpy as np
import pyarrow.parquet as pq

from wheelsim.report.metrics import round_significant
from wheelsim.run.robustness import seed_summary
from wheelsim.run.tables import (
    main_metrics,
    metric_columns,
    plot_metrics,
    plots_summary,
    worst_rows,
    write_tables,
    write_worst_runs,
)

ROWS = [{'point': i, 'c.k': k, 'seed': s, 'cross_track_rms_m': 0.1 * k + 0.01 * s,
         'min_clearance_m': 1.0 - 0.1 * s, 'passed': True, 'error': '', 'run': f'runs/{i}/r'}
        for i, (k, s) in enumerate((k, s) for k in (1, 2) for s in range(1, 11))]


def test_tables_hold_every_row_and_column(tmp_path):
    rows = [*ROWS, {'point': 20, 'c.k': 3, 'seed': 1, 'passed': False, 'error': 'boom',
                    'run': ''}]
    csv_path, parquet_path = write_tables(rows, tmp_path / 'sweep')
    with csv_path.open() as handle:
        read = list(csv.DictReader(handle))
    assert len(read) == 21 and read[-1]['error'] == 'boom' and read[-1]['cross_track_rms_m'] == ''
    table = pq.read_table(parquet_path).to_pylist()
    assert table[3]['cross_track_rms_m'] == ROWS[3]['cross_track_rms_m']
    assert table[-1]['cross_track_rms_m'] is None


def test_columns_are_in_one_order_whether_or_not_the_first_point_failed(tmp_path):
    """Found in review: with point 0 failed (no metrics), the metrics came after ``run``, so a
    script reading the CSV by position read other columns."""
    failed = {'point': 0, 'c.k': 0, 'seed': 1, 'passed': False, 'error': 'boom', 'run': 'runs/0'}
    no_clearance = {**ROWS[1], 'point': 1}
    del no_clearance['min_clearance_m']
    expected = ['point', 'c.k', 'seed', 'cross_track_rms_m', 'min_clearance_m', 'passed',
                'error', 'run']
    for rows in ([failed, *ROWS[1:]], ROWS, [no_clearance, *ROWS[2:]]):
        csv_path, parquet_path = write_tables(rows, tmp_path / 'sweep')
        with csv_path.open() as handle:
            assert next(csv.reader(handle)) == expected
        assert pq.read_table(parquet_path).column_names == expected


def test_worst_is_largest_or_smallest_by_metric(tmp_path):
    assert metric_columns(ROWS) == ['cross_track_rms_m', 'min_clearance_m']
    assert [r['point'] for r in worst_rows(ROWS, 'cross_track_rms_m', 2)] == [19, 18]
    assert worst_rows(ROWS, 'min_clearance_m', 1)[0]['seed'] == 10
    write_worst_runs(ROWS, ['c.k', 'seed'], ['cross_track_rms_m'], tmp_path / 'worst.md')
    assert '- 0.3 at point 19 (c.k=2, seed=10): [runs/19/r](runs/19/r)' in \
        (tmp_path / 'worst.md').read_text()
    plots = plot_metrics(ROWS, ['c.k', 'seed'], ['cross_track_rms_m'], tmp_path / 'plots')
    assert [p.name for p in plots] == ['cross_track_rms_m.png'] and plots[0].stat().st_size > 5000


def test_a_run_that_did_not_reach_its_goal_is_the_worst_of_time_to_goal(tmp_path):
    """Found in review: worst_runs.md listed the slowest runs that arrived, and left out the
    ones that never did (time_to_goal_s null)."""
    rows = [{**r, 'time_to_goal_s': None if r['point'] in (3, 4) else 30.0 + r['point']}
            for r in ROWS]
    rows[5] = {'point': 5, 'c.k': 1, 'seed': 6, 'passed': False, 'error': 'boom', 'run': ''}
    assert [r['point'] for r in worst_rows(rows, 'time_to_goal_s')] == [3, 4, 19]
    assert [r['point'] for r in worst_rows(rows, 'cross_track_rms_m', 1)] == [19]
    write_worst_runs(rows, ['c.k', 'seed'], ['time_to_goal_s'], tmp_path / 'worst.md')
    text = (tmp_path / 'worst.md').read_text()
    assert '- not reached at point 3 (c.k=1, seed=4): [runs/3/r](runs/3/r)' in text
    assert '- 49 at point 19 (c.k=2, seed=10)' in text
    first, second = seed_summary(rows, ['c.k', 'seed'], ['time_to_goal_s'], None)
    assert (first['runs'], first['worst'], first['worst_seed'], first['not_reached']) == \
        (7, None, 4, 2)  # 10 seeds: 2 not reached, 1 failed
    assert first['p50'] == 36.0  # of the 7 that arrived
    assert (second['worst'], second['worst_seed'], second['not_reached']) == (49.0, 10, 0)
    never = [{**r, 'time_to_goal_s': None} for r in ROWS[:2]]
    assert seed_summary(never, ['c.k', 'seed'], ['time_to_goal_s'], None)[0]['p50'] is None
    # a sweep summarises its main metrics, time_to_goal_s among them, even when none arrived
    # (found in review: the first four only, which a run with a plan always has)
    assert main_metrics(metric_columns(never)) == ['cross_track_rms_m', 'time_to_goal_s']
    assert 'time_to_goal_s' in main_metrics(metric_columns(rows))


def test_seed_summary_percentiles_worst_seed_and_command():
    summary = seed_summary(ROWS, ['c.k', 'seed'], ['cross_track_rms_m'], 'eight.yaml')
    assert [(s['c.k'], s['runs'], s['worst_seed']) for s in summary] == [(1, 10, 10), (2, 10, 10)]
    values = [r['cross_track_rms_m'] for r in ROWS[:10]]
    assert summary[0]['p90'] == round_significant(float(np.percentile(values, 90))) == 0.191
    # found in review: 0.29100000000000004, where metrics.json has 6 significant digits
    assert (summary[1]['p50'], summary[1]['p90'], summary[1]['p95']) == (0.255, 0.291, 0.2955)
    assert summary[0]['worst'] == max(values)
    assert summary[0]['reproduce'] == 'wheelsim run eight.yaml --param c.k=1 --seed 10'
    assert seed_summary(ROWS, ['c.k'], ['cross_track_rms_m'], None) == []


def test_seed_summary_counts_points_that_are_one_run_once():
    """Found in review: random samples of seed=1:2 drew 5 points of 2 runs, and the summary
    said 5 runs, its percentiles weighting the runs drawn twice."""
    drawn = [ROWS[0], ROWS[1], {**ROWS[1], 'point': 20}, {**ROWS[0], 'point': 21},
             {**ROWS[1], 'point': 22}]
    summary = seed_summary(drawn, ['c.k', 'seed'], ['cross_track_rms_m'], None)
    values = [ROWS[0]['cross_track_rms_m'], ROWS[1]['cross_track_rms_m']]
    assert [(s['runs'], s['p50']) for s in summary] == [
        (2, round_significant(float(np.percentile(values, 50))))]


def test_each_metric_plot_shows_that_metric_alone(tmp_path):
    """The figure is reused from metric to metric: a metric's plot made after another's is the
    same image as that metric's plot made alone."""
    metrics = ['cross_track_rms_m', 'min_clearance_m']
    both = plot_metrics(ROWS, ['c.k', 'seed'], metrics, tmp_path / 'both')
    alone = plot_metrics(ROWS, ['c.k', 'seed'], metrics[1:], tmp_path / 'alone')
    assert [p.name for p in both] == ['cross_track_rms_m.png', 'min_clearance_m.png']
    assert both[1].read_bytes() == alone[0].read_bytes()
    assert both[0].read_bytes() != both[1].read_bytes()


def test_the_plots_are_this_sweeps_and_none_without_a_numeric_parameter_or_value(tmp_path):
    metrics = ['cross_track_rms_m']
    text_only = [{'point': 0, 'mode': 'a', 'cross_track_rms_m': 0.1}]
    all_failed = [{'point': i, 'c.k': k, 'passed': False, 'error': 'boom', 'run': ''}
                  for i, k in enumerate((1.0, 2.0))]
    assert plot_metrics(ROWS, ['c.k'], [], tmp_path / 'none') == []
    assert plot_metrics(text_only, ['mode'], metrics, tmp_path / 'text') == []
    assert plot_metrics(all_failed, ['c.k'], metrics, tmp_path / 'failed') == []
    assert not [*tmp_path.iterdir()]
    # An earlier sweep's plots go; anything else in the folder stays.
    earlier = plot_metrics(ROWS, ['c.k'], metrics, tmp_path / 'plots')
    (tmp_path / 'plots' / 'notes.txt').write_text('mine')
    assert earlier and plot_metrics(text_only, ['mode'], metrics, tmp_path / 'plots') == []
    assert [p.name for p in (tmp_path / 'plots').iterdir()] == ['notes.txt']
    (tmp_path / 'plots' / 'notes.txt').unlink()
    plot_metrics(ROWS, ['c.k'], metrics, tmp_path / 'plots')
    assert plot_metrics(all_failed, ['c.k'], metrics, tmp_path / 'plots') == []
    assert not (tmp_path / 'plots').exists()
    # found in review: plots/ as a link to a folder (written through) failed on rmdir
    (tmp_path / 'mine').mkdir()
    (tmp_path / 'plots').symlink_to(tmp_path / 'mine')
    assert plot_metrics(ROWS, ['c.k'], metrics, tmp_path / 'plots')
    assert plot_metrics(all_failed, ['c.k'], metrics, tmp_path / 'plots') == []
    assert (tmp_path / 'plots').is_symlink() and not [*(tmp_path / 'mine').iterdir()]
    assert plots_summary([], metric_columns(text_only), tmp_path) == 'none (no numeric parameter)'
    assert plots_summary([], metric_columns(all_failed), tmp_path) == 'none (no finished run)'
    assert plots_summary([tmp_path / 'a.png'], metrics, tmp_path) == str(tmp_path)


def test_a_long_parameter_name_fits_under_its_panel(tmp_path, monkeypatch):
    """Found in review: a full parameter name ran off the figure."""
    import matplotlib.figure

    name = 'vehicle_sim.model_params.differential.drive_actuators.dead_time'
    rows = [{**row, name: row['c.k']} for row in ROWS]
    inside = []
    save = matplotlib.figure.Figure.savefig

    def saving(figure, *args, **kwargs):
        saved = save(figure, *args, **kwargs)  # the layout as drawn
        boxes = [axes.xaxis.label.get_window_extent() for axes in figure.axes]
        for axes, box in zip(figure.axes, boxes, strict=True):
            apart = all(box is other or box.x1 <= other.x0 or other.x1 <= box.x0
                        for other in boxes)
            inside.append((axes.get_xlabel(),
                           box.x0 >= 0 and box.x1 <= figure.bbox.width and apart))
        return saved

    monkeypatch.setattr(matplotlib.figure.Figure, 'savefig', saving)
    for parameters in ([name], [name, 'seed', name]):
        assert plot_metrics(rows, parameters, ['cross_track_rms_m'], tmp_path / 'plots')
    assert inside and all(fits for _, fits in inside), inside
    assert inside[0][0].replace('\n', '') == name  # broken after dots, nothing dropped


def test_one_panel_shows_the_whole_title_and_an_integer_axis_whole_numbers(tmp_path,
                                                                          monkeypatch):
    """Found in review: with one parameter the title was cut at both sides, and a seed axis
    had ticks at 1.5, 2.5."""
    import matplotlib.figure

    drawn = []
    save = matplotlib.figure.Figure.savefig

    def saving(figure, *args, **kwargs):
        saved = save(figure, *args, **kwargs)  # the layout as drawn
        [text] = figure.texts  # the title
        title, box = text.get_text(), text.get_window_extent()
        ticks = [tick for axes in figure.axes for tick in axes.get_xticks()
                 if axes.get_xlim()[0] <= tick <= axes.get_xlim()[1]]
        drawn.append((title, box.x0 >= 0 and box.x1 <= figure.bbox.width, ticks))
        return saved

    monkeypatch.setattr(matplotlib.figure.Figure, 'savefig', saving)
    rows = [row for row in ROWS if row['seed'] <= 4]
    assert plot_metrics(rows, ['seed'], ['cross_track_rms_m'], tmp_path / 'plots')
    [(title, inside, ticks)] = drawn
    assert title.startswith('cross_track_rms_m') and 'worst_runs.md' in title
    assert inside, title
    assert ticks and all(float(tick).is_integer() for tick in ticks), ticks
