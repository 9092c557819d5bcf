"""The ``wheelsim`` command's entry, in this process."""

import gc
import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from wheelsim.cli import EXIT_BAD_INPUT, main
from wheelsim.run.output import counted
from wheelsim.run.scenario import with_overrides


@pytest.fixture(autouse=True)
def process_state_restored():
    """main() takes over SIGINT and SIGTERM for the process and freezes every object it leaves
    (meant to end the process): the handlers and the collector given back after each test of
    this module, whether it calls main() or not (found in CI: a test that did not ask for this
    left 544 939 objects frozen for the next test on its worker)."""
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    yield
    gc.unfreeze()
    for number, handler in handlers.items():
        signal.signal(number, handler)


def argument_error(argv, capsys) -> str:
    """What ``main(argv)`` writes to stderr, asserting that argparse refused ``argv`` with
    exit code 2."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == EXIT_BAD_INPUT
    return capsys.readouterr().err


@pytest.mark.parametrize('argv', [['run', 'missing.yaml'], ['run', '--no-such-option']])
def test_the_entry_leaves_every_object_out_of_the_exits_collections(argv, capsys):
    """The interpreter's exit scans every tracked object in several full collections: 0.7 s of
    CPU after a ``wheelsim run`` with numba loaded. ``main`` freezes them when it returns or
    raises (argparse's exit on bad arguments)."""
    assert gc.get_freeze_count() == 0
    if argv[1] == 'missing.yaml':
        assert main(argv) == EXIT_BAD_INPUT
    else:
        with pytest.raises(SystemExit):
            main(argv)
    assert argv[1] in capsys.readouterr().err
    assert gc.get_freeze_count() > 10_000  # the modules' objects at least


@pytest.mark.parametrize('argv, message', [
    (['run', '--seed', '1', '--seed', '2'], 'argument --seed: given twice (1 and 2)'),
    (['run', '--real-time-factor', '1', '--real-time-factor', '2'],
     'argument --real-time-factor: given twice (1.0 and 2.0)'),
    (['run', '--output', 'a', '--output', 'b'], 'argument --output: given twice (a and b)'),
    # found in review: a flag given twice was taken
    (['sweep', '--quiet', '--quiet'], 'argument --quiet: given twice'),
    (['run', '--overwrite', '--no-plots', '--overwrite'], 'argument --overwrite: given twice'),
    (['sweep', '--param', 'seed=1,2', '--workers', '1', '--workers', '2'],
     'argument --workers: given twice (1 and 2)'),
    (['tune', '--param', 'seed=1,2', '--objective', 'a', '--objective', 'b'],
     'argument --objective: given twice (a and b)'),
    (['calibrate', 'bag', '-o', 'a.yaml', '--output', 'b.yaml'],
     'argument -o/--output: given twice (a.yaml and b.yaml)'),
])
def test_an_option_given_twice_is_refused_not_overridden(argv, message, capsys, tmp_path,
                                                         monkeypatch):
    """Found in review: ``--seed 1 --seed 2`` ran with seed 2 (argparse keeps the last), while
    a ``--param`` given twice is refused: a setting that another overrides is an error."""
    monkeypatch.chdir(tmp_path)  # were it taken, its results would go there
    assert f'{message}: give it once' in argument_error(argv, capsys)


@pytest.mark.parametrize('argv, message', [
    (['run', '--seed', 'abc'], "argument --seed: 'abc' must be an integer in [0, 2**63-1]"),
    (['run', '--seed', '1.5'], "argument --seed: '1.5' must be an integer in [0, 2**63-1]"),
    (['sweep', '--param', 'seed=1,2', '--workers', 'two'],
     "argument --workers: 'two' must be an integer >= 1"),
    (['sweep', '--param', 'seed=1,2', '--samples', 'x'],
     "argument --samples: 'x' must be an integer >= 1"),
    (['sweep', '--param', 'seed=1,2', '--sample-seed', 'x'],
     "argument --sample-seed: 'x' must be an integer in [0, 2**32-1]"),
    (['tune', '--param', 'seed=1,2', '--objective', 'a', '--trials', '1e3'],
     "argument --trials: '1e3' must be an integer in [1, 100000]"),
    (['tune', '--param', 'seed=1,2', '--objective', 'a', '--sampler-seed', 'x'],
     "argument --sampler-seed: 'x' must be an integer in [0, 2**32-1]"),
    (['calibrate', 'bag', '--step-rate', 'fast'],
     "argument --step-rate: 'fast' must be a number in [1, 100000] Hz"),
    # found in review: Python's int and float took what --param refuses (and ran seed 50)
    (['run', '--seed', '5_0'], "argument --seed: '5_0' must be an integer in [0, 2**63-1]"),
    (['run', '--seed', '\uff105'], "argument --seed: '\uff105' must be an integer in [0, "),
    (['sweep', '--param', 'seed=1,2', '--workers', '1_0'],
     "argument --workers: '1_0' must be an integer >= 1"),
    (['calibrate', 'bag', '--step-rate', '1_000'],
     "argument --step-rate: '1_000' must be a number in [1, 100000] Hz"),
    (['run', '--real-time-factor', '1_0'],
     "argument --real-time-factor: '1_0' must be 0 (as fast as possible) or in [0.001, 1e+06]"),
    (['run', '--real-time-factor='],  # found in review: an empty value left a blank
     "argument --real-time-factor: '' must be 0 (as fast as possible) or in [0.001, 1e+06]"),
])
def test_an_option_that_is_no_number_is_refused_naming_what_is_allowed(argv, message, capsys):
    """Found in review: ``--seed abc`` said ``invalid int value: 'abc'``, without the range."""
    assert message in argument_error(argv, capsys)


@pytest.mark.parametrize('argv, key, value', [
    (['run', '--seed', '0x10'], 'seed', 16),  # as --param seed=0x10 reads it
    (['run', '--real-time-factor', '2e1'], 'real_time_factor', 20.0),
    (['sweep', '--param', 'seed=1,2', '--workers', '+3'], 'workers', 3),
])
def test_a_number_option_reads_its_value_as_param_does(argv, key, value):
    from wheelsim.cli import _parser

    parsed = vars(_parser().parse_args(argv))[key]
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize('argv, line', [
    ([], 'wheelsim: error: the following arguments are required: command (see wheelsim -h)'),
    # found in review: the command's unknown arguments named wheelsim, not the command, and
    # an option's abbreviation was taken as the option (--no-plot ran a whole run)
    (['run', '--no-such-option'],
     'wheelsim run: error: unrecognized arguments: --no-such-option (see wheelsim run -h)'),
    (['run', '--no-plot'], 'wheelsim run: error: unrecognized arguments: --no-plot'),
    (['calibrate', 'bag', '-o', 'x', '--step', '1000'],
     'wheelsim calibrate: error: unrecognized arguments: --step 1000'),
    (['--bogus', 'run'], 'wheelsim: error: unrecognized arguments: --bogus (see wheelsim -h)'),
    (['tune', '--param', 'seed=1,2'], 'wheelsim tune: error: the following arguments are '
     'required: --objective (see wheelsim tune -h)'),
    (['sweep', '--sample', 'sobol'], "wheelsim sweep: error: argument --sample: invalid choice: "
     "'sobol' (choose from "),  # the choices as this Python's argparse writes them
])
def test_an_argument_error_is_one_line(argv, line, capsys):
    """Found in review: argparse's errors began with the usage, four to eight lines in all;
    bad input gets one line (the usage is in ``-h``)."""
    err = argument_error(argv, capsys)
    assert err.startswith(line) and err.count('\n') == 1, err
    assert err.endswith(f' (see {line.split(": error")[0]} -h)\n'), err


def test_a_map_of_vehicle_sim_is_read_before_the_run(capsys, tmp_path, monkeypatch):
    """Found in review: world.map_yaml given in nodes: or by --param was read only by the node,
    after the run had started: a traceback, exit 1 and a run folder left behind."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'map.yaml').write_text('nodes: {vehicle_sim: {world: {map_yaml: nothing.yaml}}}\n')
    for argv, given in ((['run', 'map.yaml'], 'map.yaml: nodes.'),
                        (['run', '--param', 'vehicle_sim.world.map_yaml=nothing.yaml'],
                         "--param vehicle_sim.world.map_yaml=nothing.yaml: ")):
        assert main(argv) == EXIT_BAD_INPUT
        assert capsys.readouterr().err == (f'wheelsim run: error: {given}'
                                           'vehicle_sim.world.map_yaml: cannot read map '
                                           'nothing.yaml: No such file or directory\n')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['map.yaml']


WAYPOINTS = 'planner.waypoints=[2.0,0.0,.nan,2.0,2.0,1.57]'
OBJECTIVE = ['--objective', 'cross_track_rms_m']


@pytest.mark.parametrize('argv, message', [
    # the type check of every --param, arrays included (a sweep's points each)
    (['run', '--param', 'planner.waypoints=1.0'],
     '--param planner.waypoints=1.0: planner.waypoints: must be a list of numbers (NaN allowed, '
     'no infinities), not one value'),
    (['run', '--param', 'controller.lead_time=[0.1,0.2]'],
     '--param controller.lead_time=[0.1,0.2]: controller.lead_time: must be -1 (from the '
     'vehicle) or a finite number in [0, 10], not an array'),
    (['sweep', '--param', f'{WAYPOINTS},[2,0,.nan,2,2,1.57]'],
     '--param planner.waypoints=[2,0,.nan,2,2,1.57]: planner.waypoints: the array [2, 0, .nan, '
     '2, 2, 1.57] mixes integers and doubles, which ROS refuses (an array has one type): write 2 '
     'as 2.0'),
    (['run', '--param', 'planner.waypoints=[2.0,0.0]'],
     '--param planner.waypoints=[2.0,0.0]: planner.waypoints: the waypoint list: expected x, y, '
     'theta triples (theta .nan when free), got 2 numbers, not a multiple of 3'),
    # no waypoints: nothing publishes goal_pose in a run (found in review: the vehicle stood
    # still and the run passed)
    (['run', '--param', 'planner.waypoints=[]'],
     '--param planner.waypoints=[]: planner.waypoints: none given: nothing publishes goal_pose '
     'in a run, so the vehicle would stand still; give x, y, theta triples (theta .nan where '
     'free)'),
    # a setting another caps is refused
    (['run', '--param', 'planner.limits.max_speed=0.5', '--param',
      'planner.limits.max_reverse_speed=0.6'],
     '--param planner.limits.max_speed=0.5 planner.limits.max_reverse_speed=0.6: '
     'planner.limits.max_reverse_speed: must be at most limits.max_speed (0.5 m/s), which caps '
     'it, or 0 (max_speed)'),
    # the value as --param writes it (found in review: ~ was shown as None, a text in quotes)
    (['run', '--param', 'controller.feedforward.k_x=~'],
     '--param controller.feedforward.k_x=null: controller.feedforward.k_x: must be a finite '
     'number in [0, 100]'),
    (['run', '--param', 'controller.algorithm=fast'],
     "--param controller.algorithm=fast: controller.algorithm: must be one of 'feedforward', "
     "'pure_pursuit', 'stanley', 'policy'"),
    # the form of the value
    (['run', '--param', 'planner.waypoints=[2.0,0.0,.nan'],
     "--param 'planner.waypoints=[2.0,0.0,.nan': unbalanced brackets: 1 [ of '[2.0,0.0,.nan' "
     'not closed by ]'),
    (['run', '--param', f'{WAYPOINTS},[3.0,0.0,.nan]'],
     '--param planner.waypoints: wheelsim run takes one value (sweep several with wheelsim '
     'sweep)'),
    (['tune', '--param', f'{WAYPOINTS},[3.0,0.0,.nan]', *OBJECTIVE],
     '--param planner.waypoints=[2.0,0.0,.nan,2.0,2.0,1.57],[3.0,0.0,.nan]: tune cannot search '
     "an array (an Optuna choice is a single value): set the array in the scenario's nodes:, "
     'or compare arrays with wheelsim sweep'),
])
def test_an_array_param_is_checked_and_refused_on_one_line_naming_it(argv, message, capsys,
                                                                     tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # were one accepted, its results would go there
    assert main(argv) == EXIT_BAD_INPUT
    assert capsys.readouterr().err == f'wheelsim {argv[0]}: error: {message}\n'


def test_a_scenario_without_waypoints_is_refused(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'idle.yaml').write_text('duration: 20.0\n')
    assert main(['run', 'idle.yaml']) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.startswith(
        'wheelsim run: error: idle.yaml: nodes.planner.waypoints (its default, []): none given: '
        'nothing publishes goal_pose in a run')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['idle.yaml']


@pytest.mark.parametrize('argv, message', [
    # found in review: a value given by --param was named as the scenario file's
    (['run', '--param', 'planner.waypoints=[0.0,0.0,.nan]'],
     "--param planner.waypoints: the only waypoint, (0, 0), is vehicle_sim's "
     'initial_pose: the vehicle is there already and would stand still; give the waypoints to '
     'drive through'),
    (['run', '--param', 'planner.waypoints=[1.5,-2.0,0.0]', '--param',
      'vehicle_sim.initial_pose.x=1.5', '--param', 'vehicle_sim.initial_pose.y=-2.0'],
     "--param planner.waypoints: the only waypoint, (1.5, -2), is "
     "vehicle_sim's initial_pose: the vehicle is there already and would stand still; give the "
     'waypoints to drive through'),
    (['run', '--param', 'localization.map_frame=world'],
     "the default scenario with --param localization.map_frame: the map frame (frame_prefix + "
     "map_frame) differs between the nodes: "
     "localization 'world', planner 'map', controller 'map'; the controller refuses a pose or "
     'plan in another frame than its own: give each the same'),
    (['run', '--param', 'planner.holonomic=true'],
     "--param planner.holonomic: only an omni vehicle moves sideways; the model is "
     "'differential' (vehicle_sim.model)"),
    # found in review: the mecanum preset's holonomic plan with stanley drove 0.5 m off it
    (['run', '--param', 'vehicle_sim.model=omni', '--param', 'planner.holonomic=true',
      '--param', 'controller.algorithm=stanley'],
     '--param controller.algorithm: stanley does not follow a holonomic plan '
     '(planner.holonomic true: the base slides sideways, which a steered front axle cannot): '
     'choose feedforward or pure_pursuit, or set planner.holonomic false'),
])
def test_a_run_that_would_stand_still_is_refused_before_it_starts(argv, message, capsys, tmp_path,
                                                                  monkeypatch):
    """Found by hand: one waypoint at the start pose ran, the planner warned "no plan" and the
    vehicle stood still for the whole run, exit 0; the built-in scenario was named by its
    installed path."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == EXIT_BAD_INPUT
    assert capsys.readouterr().err == f'wheelsim {argv[0]}: error: {message}\n'
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize('scenario, argv, message', [
    ('record: [scan, footprint]\n', [],
     "s.yaml: record: /scan: published only with a map (map, or vehicle_sim's world.map_yaml), "
     'which the scenario does not give'),
    ('record: [map]\nmap: room\n', ['--param', 'vehicle_sim.world.publish_map=false'],
     's.yaml: record: /map: not published with --param vehicle_sim.world.publish_map false'),
    ('record: [odom, collision]\nmap: room\nnodes: {vehicle_sim: {world.collisions: false}}\n',
     [], 's.yaml: record: /collision: not published with nodes.vehicle_sim.world.collisions '
     'false'),
])
def test_a_recorded_topic_no_node_of_the_scenario_publishes_is_refused(
        scenario, argv, message, capsys, tmp_path, monkeypatch):
    """Found in review: record: [scan] without a map ran and wrote an empty bag."""
    monkeypatch.chdir(tmp_path)
    text = scenario.replace('nodes: {vehicle_sim:', 'nodes: {planner: {waypoints: [1.0, 0.0, '
                                                    '.nan]}, vehicle_sim:')
    if 'nodes:' not in text:
        text += 'nodes: {planner: {waypoints: [1.0, 0.0, .nan]}}\n'
    (tmp_path / 's.yaml').write_text(text)
    assert main(['run', 's.yaml', *argv]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err == f'wheelsim run: error: {message}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['s.yaml']


POLICY = ['--param', 'controller.algorithm=policy']
NO_MODULE = "controller.policy.callable: cannot import badpol (No module named 'badpol')"


@pytest.mark.parametrize('argv, fragment', [
    (['run', *POLICY, '--param', 'controller.policy.callable=badpol:short'], NO_MODULE),
    (['sweep', *POLICY, '--param', 'controller.policy.callable=badpol:short,badpol:long'],
     NO_MODULE),
    # tune checks each choice alone, with the scenario's algorithm (feedforward)
    (['tune', '--param', 'controller.policy.callable=badpol:short,badpol:long', *OBJECTIVE],
     "--param controller.policy.callable=badpol:short: controller.policy.callable: is used "
     'by algorithm policy only'),
])
def test_a_policy_module_function_is_one_text_value_for_every_command(argv, fragment, capsys,
                                                                      tmp_path, monkeypatch):
    """Not a range LOW:HIGH: the text reaches the controller's check, which refuses it here
    naming the parameter (not its LOW)."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == EXIT_BAD_INPUT
    assert fragment in capsys.readouterr().err


SHORT_RUN = ('name: short\nduration: 3.0\n'
             'nodes: {planner: {waypoints: [0.5, 0.0, .nan]}}\n')


@pytest.mark.parametrize('where, plots, said', [
    ('metrics', [], 'the bag, metrics.json and timing.json are in '),
    ('plots', [], 'the bag, metrics.json and timing.json are in .*, the plots incomplete'),
    ('metrics', ['--no-plots'], 'the bag, metrics.json and timing.json are in '),
])
def test_ctrl_c_while_the_report_is_written_keeps_the_metrics_and_says_what_is_there(
        where, plots, said, capsys, tmp_path, monkeypatch):
    """A Ctrl-C after the run (a second one, say): the metrics are written first, then the
    command ends with 130 saying what the folder holds (left alone: it said "interrupted")."""
    from wheelsim.report import metrics
    from wheelsim.report import plots as report_plots

    target = {'metrics': (metrics, 'compute_metrics'),
              'plots': (report_plots, 'write_plots')}[where]
    original = getattr(*target)

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # arrives here, in the main thread
        return original(*args, **kwargs)

    monkeypatch.setattr(*target, interrupted)
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'short.yaml').write_text(SHORT_RUN)
    assert main(['run', 'short.yaml', '--quiet', '--output', 'out', *plots]) == 130
    err = capsys.readouterr().err
    assert re.search(f'wheelsim run: interrupted while writing the report: {said}', err), err
    assert str(tmp_path / 'out' / 'short') in err
    record = json.loads((tmp_path / 'out' / 'short' / 'metrics.json').read_text())
    assert record['cross_track_rms_m'] is not None
    assert (tmp_path / 'out' / 'short' / 'timing.json').is_file()


def test_ctrl_c_after_a_run_without_a_bag_does_not_claim_one(capsys, tmp_path, monkeypatch):
    """Found in review: a user's bag/ left alone in a run folder reused by a run that records
    nothing made the message say "the bag, metrics.json ..."."""
    from wheelsim.report import metrics

    monkeypatch.chdir(tmp_path)
    (tmp_path / 'short.yaml').write_text(SHORT_RUN + 'record: none\n')
    assert main(['run', 'short.yaml', '--quiet', '--output', 'out', '--no-plots']) == 0
    (tmp_path / 'out' / 'short' / 'bag').mkdir()
    (tmp_path / 'out' / 'short' / 'bag' / 'notes.txt').write_text('mine')
    original = metrics.compute_metrics

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        return original(*args, **kwargs)

    monkeypatch.setattr(metrics, 'compute_metrics', interrupted)
    capsys.readouterr()
    assert main(['run', 'short.yaml', '--quiet', '--output', 'out', '--no-plots',
                 '--overwrite']) == 130
    err = capsys.readouterr().err
    assert ('wheelsim run: interrupted while writing the report: metrics.json and timing.json '
            'are in ') in err, err


@pytest.mark.parametrize(('count', 'noun', 'text'), [
    (1, 'run', '1 run'), (0, 'run', '0 runs'), (2, 'Ray worker', '2 Ray workers'),
    (1, 'more row', '1 more row')])
def test_counts_in_the_commands_lines_agree_with_their_nouns(count, noun, text):
    assert counted(count, noun) == text


@pytest.mark.parametrize(('argv', 'message'), [
    (['run', '--param', 'vehicle_sim.real_time_factor=0.5'],
     '--param vehicle_sim.real_time_factor: has no effect in the run: only the reference clock '
     'uses it (be_reference_clock true, use_sim_time false, chosen at start-up), and this '
     'vehicle_sim follows the clock of a wheelsim run, which --real-time-factor paces; remove it'),
    (['sweep', '--param', 'vehicle_sim.clock_rate=50,100'], '--param vehicle_sim.clock_rate: has '
     'no effect in any run of the sweep: only the reference clock uses it'),
    (['run', '--param', 'vehicle_sim.model_params.omni.track=0.4'],
     '--param vehicle_sim.model_params.omni.track: has no effect in the run: the vehicle is '
     'differential (model is read only); remove it'),
    (['tune', '--param', 'localization.ekf.measurement_rate=5:20', *OBJECTIVE],
     '--param localization.ekf.measurement_rate: has no effect in any trial: only mode ekf uses '
     'it, and mode is noisy (read only); remove it'),
    (['sweep', '--param', 'localization.mode=noisy,perfect', '--param',
      'localization.ekf.measurement_rate=5'], '--param localization.ekf.measurement_rate: has no '
     'effect in any run of the sweep: only mode ekf uses it'),
    # found in review: more than 1000 combinations of numbers checked nothing
    (['tune', '--param', 'vehicle_sim.real_time_factor=1:2', *[
        arg for name in ('controller.lead_time', 'planner.limits.max_speed',
                         'controller.goal.xy_tolerance')
        for arg in ('--param', f'{name}=' + ','.join(f'0.{i + 10}' for i in range(11)))],
      *OBJECTIVE], '--param vehicle_sim.real_time_factor: has no effect in any trial'),
    # each run's reason once (found in review: only the last run's was named)
    (['sweep', '--param', 'vehicle_sim.model=bicycle,omni', '--param',
      'vehicle_sim.model_params.differential.track=0.4'],
     '--param vehicle_sim.model_params.differential.track: has no effect in any run of the '
     'sweep: the vehicle is bicycle (model is read only); the vehicle is omni (model is read '
     'only); remove it'),
    # found in review: another tracking law's gain swept, every point the same run
    (['sweep', '--param', 'controller.stanley.k=1,2'], '--param controller.stanley.k: has no '
     'effect in any run of the sweep: only algorithm stanley uses it, and algorithm is '
     'feedforward; remove it'),
    (['run', '--param', 'controller.policy.preview_distance=0.5'], '--param '
     'controller.policy.preview_distance: has no effect in the run: only algorithm policy uses '
     'it, and algorithm is feedforward; remove it'),
])
def test_a_param_the_run_would_not_use_is_refused_saying_why(argv, message, capsys, tmp_path,
                                                             monkeypatch):
    """Found in review: such a value was taken and changed nothing (a sweep over it gave the
    same run at every point, exit 0)."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert error.startswith(f'wheelsim {argv[0]}: error: ') and message in error, error
    assert not (tmp_path / 'results').exists()


def test_a_scenario_s_nodes_value_the_run_would_not_use_is_refused(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 's.yaml').write_text(
        'nodes:\n  planner: {waypoints: [1.0, 0.0, .nan]}\n'
        '  localization: {ekf: {measurement_rate: 5.0}}\n')
    assert main(['run', 's.yaml']) == EXIT_BAD_INPUT
    assert capsys.readouterr().err == (
        'wheelsim run: error: s.yaml: nodes.localization.ekf.measurement_rate: has no effect in '
        'the run: only mode ekf uses it, and mode is noisy (read only); remove it\n')


@pytest.mark.parametrize(('algorithm', 'gain', 'model', 'used'), [
    ('stanley', 'k_theta', 'differential', True), ('stanley', 'k_x', 'differential', True),
    ('stanley', 'k_y', 'differential', False), ('policy', 'k_theta', 'differential', True),
    ('policy', 'k_x', 'differential', False), ('pure_pursuit', 'k_theta', 'differential', False),
    # a car turns on the spot nowhere, only a differential base ends point to point
    ('stanley', 'k_theta', 'bicycle', False), ('stanley', 'k_x', 'omni', False),
    ('stanley', 'k_theta', 'omni', True)])
def test_the_feedforward_gains_another_law_uses_are_taken_in_a_run(algorithm, gain, model, used):
    """Found in review: Stanley turns a base that is not a car on the spot with
    feedforward.k_theta and ends a differential base point to point with feedforward.k_x (a
    policy turns at the goal with k_theta), yet a run refused them as having no effect; and
    (the diff review) once taken, a car's were taken too, though it uses neither."""
    from wheelsim.cli import _load
    from wheelsim.run.runner import unused_in_a_run
    from wheelsim.run.scenario import ScenarioError, check_used

    scenario, _ = _load(None)
    name = f'controller.feedforward.{gain}'
    point = with_overrides(scenario, {'vehicle_sim.model': model,
                                      'controller.algorithm': algorithm, name: 3.0},
                           lambda *a: None)
    if used:
        check_used(scenario, [point], [name], unused_in_a_run, 'the run')
    else:
        with pytest.raises(ScenarioError, match=f'^--param {name}: has no effect in the run: '
                                                'only algorithm feedforward uses it'):
            check_used(scenario, [point], [name], unused_in_a_run, 'the run')


@pytest.mark.parametrize(('runs', 'refused'), [
    (['noisy'], True), (['noisy', 'ekf'], False), (['ekf'], False), ([], False)])
def test_a_parameter_some_run_uses_is_taken(runs, refused):
    """Found in review: a sweep over localization.mode=noisy,ekf with a fixed ekf rate was
    refused at its noisy points, though its ekf points use the rate."""
    from wheelsim.cli import _load
    from wheelsim.run.runner import unused_in_a_run
    from wheelsim.run.scenario import ScenarioError, check_used

    scenario, _ = _load(None)
    rate = {'localization.ekf.measurement_rate': 5.0}
    points = [with_overrides(scenario, {'localization.mode': mode, **rate}, lambda *a: None)
              for mode in runs]
    if refused:
        with pytest.raises(ScenarioError, match='^--param localization.ekf.measurement_rate: has '
                                                'no effect in any run: only mode ekf'):
            check_used(scenario, points, [*rate], unused_in_a_run, 'any run')
    else:
        check_used(scenario, points, [*rate], unused_in_a_run, 'any run')


def test_a_param_the_run_uses_with_another_given_is_taken(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(['run', '--no-plots', '--quiet', '--param', 'localization.mode=ekf',
                 '--param', 'localization.ekf.measurement_rate=5']) == 0
    assert (tmp_path / 'results' / 'default' / 'metrics.json').is_file()


@pytest.mark.parametrize('argv', [
    ['run', '--param', 'vehicle_sim.model=bicycle'],
    ['run', '--param', 'vehicle_sim.model=omni'],
    ['sweep', '--param', 'vehicle_sim.model=bicycle,omni'],
    ['sweep', '--param', 'localization.mode=noisy,ekf', '--param',
     'localization.ekf.measurement_rate=5'],
    ['tune', '--param', 'localization.mode=noisy,ekf', '--param',
     'localization.ekf.measurement_rate=5:20', *OBJECTIVE],
    ['tune', '--param', 'seed=1..1000', '--param', 'localization.mode=noisy,ekf', '--param',
     'localization.ekf.measurement_rate=5:20', *OBJECTIVE],
])
def test_a_param_switching_the_model_or_mode_keeps_the_values_it_makes_used(
        argv, capsys, tmp_path, monkeypatch):
    """Found in review: --param vehicle_sim.model=bicycle refused the default scenario's own
    differential geometry (which its nodes: gives) as unused; a sweep or tune whose mode axis
    makes an ekf rate used was refused at its other points. Every check passes: the command
    stops only at --output, a file (so nothing runs)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'a_file').write_text('')
    assert main([*argv, '--output', 'a_file']) == EXIT_BAD_INPUT
    assert capsys.readouterr().err == (f'wheelsim {argv[0]}: error: --output a_file: is a file, '
                                       'not a folder\n')


def test_a_nodes_value_refused_names_the_run_s_reason_not_the_scenario_s(capsys, tmp_path,
                                                                         monkeypatch):
    """Found in review: the reason named the mode of the scenario as written beside the run's."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 's.yaml').write_text(
        'nodes:\n  planner: {waypoints: [1.0, 0.0, .nan]}\n'
        '  localization: {mode: perfect, ekf: {measurement_rate: 5.0}}\n')
    assert main(['run', 's.yaml', '--param', 'localization.mode=noisy']) == EXIT_BAD_INPUT
    assert capsys.readouterr().err == (
        'wheelsim run: error: s.yaml: nodes.localization.ekf.measurement_rate: has no effect in '
        'the run: only mode ekf uses it, and mode is noisy (read only); remove it\n')


def test_version_is_the_package_xml_version(capsys):
    package_xml = Path(__file__).resolve().parents[1] / 'package.xml'
    version = re.search(r'<version>([^<]+)</version>', package_xml.read_text()).group(1)
    with pytest.raises(SystemExit) as exit_info:
        main(['--version'])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f'wheelsim {version}\n'


def test_a_huge_param_value_is_cut_in_the_error(capsys, tmp_path):
    """Found in review: a 5000-digit value was echoed whole in the one-line error."""
    assert main(['run', '--param', 'controller.lead_time=' + '9' * 5000,
                 '--output', str(tmp_path)]) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert ('controller.lead_time: must be -1 (from the vehicle) or a finite number in [0, 10]'
            in error)
    assert len(error) < 300 and '...' in error, error



@pytest.mark.parametrize('argv, message', [
    (['run'], 's.yaml: pass_criteria.collisions: computed only with a map'),
    (['sweep', '--param', 'seed=1,2'], 's.yaml: pass_criteria.collisions: computed only with '
                                       'a map'),
    (['tune', '--param', 'controller.lead_time=0:0.5', *OBJECTIVE],
     'pass_criteria.collisions: computed only with a map, which s.yaml does not give'),
])
def test_a_pass_criterion_on_the_world_without_a_map_is_refused(argv, message, capsys, tmp_path,
                                                                monkeypatch):
    """Found in review: every run (each point, each trial) ran to fail it, the metric unset."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 's.yaml').write_text(SHORT_RUN + 'pass_criteria: {collisions: 0, '
                                                 'cross_track_rms_m: 1}\n')
    assert main([argv[0], 's.yaml', *argv[1:]]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f'wheelsim {argv[0]}: error: ') and message in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ['s.yaml']


def test_a_collisions_criterion_with_collisions_off_is_refused(capsys, tmp_path, monkeypatch):
    """Found in review: world.collisions false reports no contact, and a run through a wall
    passed collisions: 0."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 's.yaml').write_text(
        'duration: 3.0\nmap: room\npass_criteria: {collisions: 0}\n'
        'nodes: {planner: {waypoints: [0.5, 0.0, .nan]}, '
        'vehicle_sim: {world.collisions: false}}\n')
    assert main(['run', 's.yaml', '--output', 'out']) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert ('s.yaml: pass_criteria.collisions: counts the contacts vehicle_sim reports, which '
            'its world.collisions: false turns off') in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ['s.yaml']


def test_overwrite_refuses_to_remove_a_file_the_run_reads(capsys, tmp_path, monkeypatch):
    """Found in review: a scenario saved as the run folder's metrics.json was replaced by the
    run's metrics, and a map image saved as one of its plots removed before the run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'short.yaml').write_text(SHORT_RUN)
    assert main(['run', 'short.yaml', '--quiet', '--no-plots', '--output', 'out']) == 0
    inside = tmp_path / 'out' / 'short' / 'metrics.json'
    inside.write_text(SHORT_RUN)
    capsys.readouterr()
    assert main(['run', str(inside), '--quiet', '--no-plots', '--output', 'out',
                 '--overwrite']) == EXIT_BAD_INPUT
    assert capsys.readouterr().err == (
        f'wheelsim run: error: {inside} is read by this run (its scenario, params_file or map) '
        'and a run writes there: not overwriting it; move it or choose another --output\n')
    assert inside.read_text() == SHORT_RUN
    assert (tmp_path / 'out' / 'short' / 'bag' / 'metadata.yaml').is_file()  # nothing removed


def test_ctrl_c_before_a_command_handles_it_is_an_interrupt_not_a_traceback(
        capsys, monkeypatch):
    """Found in review: a Ctrl-C while the command loaded (its imports, its arguments) ended
    in a traceback through the executable's entry point."""
    import wheelsim
    from wheelsim import cli, entry

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, '_parser', interrupted)
    assert main(['run']) == 130
    assert capsys.readouterr().err == 'wheelsim: interrupted\n'

    class InterruptedImport:  # a Ctrl-C while wheelsim.cli is imported
        def find_spec(self, name, path=None, target=None):
            if name == 'wheelsim.cli':
                raise KeyboardInterrupt
            return None

    monkeypatch.delattr(wheelsim, 'cli')
    monkeypatch.delitem(sys.modules, 'wheelsim.cli')
    monkeypatch.setattr(__import__('sys'), 'meta_path',
                        [InterruptedImport(), *sys.meta_path])
    assert entry.main() == 130
    assert capsys.readouterr().err == 'wheelsim: interrupted\n'


def test_sigterm_while_the_command_loads_is_an_interrupt_too():
    """Found in review: a SIGTERM in the first half second (the command's imports) ended the
    process with signal 15 and no word, where a Ctrl-C gave one line and exit 130."""
    import subprocess

    program = (
        'import os, signal, sys\n'
        'class SigtermOnImport:\n'
        '    def find_spec(self, name, path=None, target=None):\n'
        '        if name == "wheelsim.cli":\n'
        '            os.kill(os.getpid(), signal.SIGTERM)\n'
        '        return None\n'
        'sys.meta_path.insert(0, SigtermOnImport())\n'
        'from wheelsim.entry import main\n'
        'sys.exit(main())\n')
    done = subprocess.run([sys.executable, '-c', program], capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stderr) == (130, 'wheelsim: interrupted\n'), done


def test_ctrl_c_before_the_simulation_begins_leaves_no_run_folder(capsys, tmp_path, monkeypatch):
    """Found in review: a folder holding only its marker was left, and the next run went to
    short-2."""
    from wheelsim.run import runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, 'simulate', interrupted)
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'short.yaml').write_text(SHORT_RUN)
    assert main(['run', 'short.yaml', '--quiet', '--no-plots', '--output', 'out']) == 130
    assert capsys.readouterr().err == 'wheelsim run: interrupted\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['short.yaml']  # no out/ either


def test_a_tune_with_every_value_fixed_is_refused(capsys, tmp_path, monkeypatch):
    """Found in review: --param controller.lead_time=0.1 ran its trials, each the same run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'short.yaml').write_text(SHORT_RUN)
    assert main(['tune', 'short.yaml', '--param', 'controller.lead_time=0.1', '--param',
                 'controller.feedforward.k_x=2', *OBJECTIVE]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err == (
        'wheelsim tune: error: --param controller.lead_time=0.1 --param '
        'controller.feedforward.k_x=2: one value each, so every trial would be the same run: '
        'give a range LOW:HIGH or two values or more (wheelsim run runs one)\n')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['short.yaml']


@pytest.mark.parametrize('axis, said', [
    ('controller.lead_time=-1:0', 'controller.lead_time=-1:0: controller.lead_time: -1 (from the '
     'vehicle) is a value of its own, not the end of a range: a range lies in [0, 10]; give -1 '
     'as one of a list of values'),
    ('controller.limits.min_linear_x=-1:1', 'controller.limits.min_linear_x=-1:1: '
     "controller.limits.min_linear_x: 1 (minus the vehicle's top speed) is a value of its own, "
     'not the end of a range: a range lies in [-100, 0]; give 1 as one of a list of values'),
    ('vehicle_sim.model_params.differential.vis_tire_diameter=-1:0.3',
     'vehicle_sim.model_params.differential.vis_tire_diameter=-1:0.3: '
     'vehicle_sim.model_params.differential.vis_tire_diameter: -1 (0.4 x track) is a value of '
     'its own'),
    ('controller.lead_time=0..2', 'controller.lead_time=0..2: controller.lead_time is no '
     'integer parameter, and FIRST..LAST counts integers (for an integer parameter or seed): '
     'give the values V1,V2,..., or a range LOW:HIGH'),
    ('controller.algorithm=0..2', 'controller.algorithm=0..2: controller.algorithm is no '
     'integer parameter, and FIRST..LAST counts integers (for an integer parameter or seed): '
     'give the values V1,V2,...\n'),
    ('planner.waypoints=[1.0,0.0,.nan]', 'planner.waypoints=[1.0,0.0,.nan]: tune cannot search '
     'an array'),
    # found in review: a value of the wrong type alone was refused as 'one value each'
    ('controller.lead_time=a:b', 'controller.lead_time=a:b: controller.lead_time: must be -1 '
     '(from the vehicle) or a finite number in [0, 10]\n'),
])
def test_a_tune_axis_no_trial_could_run_is_refused_before_any(capsys, tmp_path, monkeypatch,
                                                              axis, said):
    """Found in review: lead_time=-1:0 has valid ends but no valid value between them (-1 or
    [0, 10]): every trial failed at run time, exit 1, a study of failures left behind;
    0..2 of a real parameter became the choices 0, 1, 2 without a word; an array alone was
    refused as 'one value each'."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'short.yaml').write_text(SHORT_RUN)
    assert main(['tune', 'short.yaml', '--param', axis, *OBJECTIVE]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.startswith(f'wheelsim tune: error: --param {said}')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['short.yaml']


def ray_start_replaced(monkeypatch, init) -> None:
    """``RayRunner._init_in_thread`` replaced by ``init(self, ray, **options)``, and the
    environment variables the runner sets given back after the test."""
    from wheelsim.run import execution

    for variable, value in ((execution.SINGLE_NODE_SWITCH, '0'), (execution.AUTH_MODE, 'token'),
                            (execution.WORKER_NICENESS, '0'), ('RAY_USAGE_STATS_ENABLED', '0')):
        monkeypatch.setenv(variable, os.environ.get(variable, value))
    monkeypatch.setattr(execution.RayRunner, '_init_in_thread', init)


def test_an_output_folder_the_command_made_and_left_empty_is_removed(tmp_path, monkeypatch, capsys):
    """Found in review: a tune whose --storage was not a database (found once --output was
    made) left that folder behind, empty; so did a sweep stopped while Ray started."""
    # no Ray instance: the study fails to open after it (on a loaded host a real one's 30 s
    # start time-out would end the command with exit 1 first)
    ray_start_replaced(monkeypatch, lambda self, ray, **options: None)
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'short.yaml').write_text(SHORT_RUN)
    (tmp_path / 'not_a_database').write_text('text')
    (tmp_path / 'kept').mkdir()
    for output in ('made/out', 'kept/out'):
        assert main(['tune', 'short.yaml', '--param', 'controller.lead_time=0:0.8',
                     '--objective', 'cross_track_rms_m', '--storage',
                     f'sqlite:///{tmp_path}/not_a_database', '--output', output]) == \
            EXIT_BAD_INPUT
        assert 'cannot open the study there' in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ['kept', 'not_a_database', 'short.yaml']
    assert list((tmp_path / 'kept').iterdir()) == []


TIMED_OUT = ('The current node timed out during startup. This could happen because some of the '
             'raylet failed to startup or the GCS has become overloaded.')


# found in CI on an overloaded host: Ray's start gave up waiting 30 s for its raylet, and the
# command ended with a traceback of ray.init
@pytest.mark.parametrize('command', [['sweep', '--param', 'seed=1,2'],
                                     ['tune', '--param', 'seed=1:2', '--trials', '2',
                                      '--objective', 'cross_track_rms_m']])
def test_a_ray_instance_that_does_not_start_is_one_line_and_exit_1(
        command, capsys, tmp_path, monkeypatch):
    def timed_out(self, ray, **options):
        raise Exception(TIMED_OUT)  # what ray.init raises: a bare Exception

    ray_start_replaced(monkeypatch, timed_out)
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'short.yaml').write_text(SHORT_RUN)
    assert main([command[0], 'short.yaml', *command[1:], '--workers', '1', '--quiet',
                 '--output', 'out']) == 1
    assert capsys.readouterr().err == (
        f"wheelsim {command[0]}: error: Ray's local instance did not start: {TIMED_OUT}\n")
    assert not (tmp_path / 'out').exists()
