"""Scenario files: defaults, params-file layering, and errors that name the key."""

import textwrap

import pytest

from wheelsim.core.params import ParameterError, ParamSpec
from wheelsim.run.sampling import parse_axis
from wheelsim.run.scenario import (
    RECORDABLE_TOPICS,
    ScenarioError,
    check_node_parameters,
    load_scenario,
    with_overrides,
)

SPECS = {
    'vehicle_sim': [ParamSpec('model', 'bicycle', 'model', choices=('bicycle', 'differential')),
                    ParamSpec('model_params.differential.track', 1.4, 'track', min_value=0.0,
                              min_exclusive=True),
                    ParamSpec('step_rate', 1000.0, 'steps', min_value=1.0),
                    ParamSpec('pub_rate', 50.0, 'publications', min_value=1.0)],
    'localization': [ParamSpec('mode', 'perfect', 'mode', choices=('perfect', 'noisy', 'ekf')),
                     ParamSpec('seed', 0, 'seed', min_value=0)],
    'planner': [ParamSpec('waypoints', (), 'waypoints', nan_allowed=True)],
    'controller': [ParamSpec('k_x', 1.0, 'gain', min_value=0.0)],
}
METRICS = ('cross_track_rms_m', 'goal_error_m')


def write(tmp_path, text, name='scenario.yaml'):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_full_scenario_with_params_file_layering(tmp_path):
    write(tmp_path, """
        /**:
          ros__parameters:
            model: differential
        vehicle_sim:
          ros__parameters:
            model_params: {differential: {track: 0.5}}
        controller:
          ros__parameters: {k_x: 2.0}
        """, 'robot.yaml')
    path = write(tmp_path, """
        name: eight
        duration: 12.5
        seed: 7
        params_file: robot.yaml
        record: [ground_truth, /odom]
        pass_criteria: {cross_track_rms_m: 0.1}
        nodes:
          controller: {k_x: 3.0}
          planner: {waypoints: [1.0, 0.0, .nan]}
        """)
    scenario = load_scenario(path, SPECS, METRICS)
    assert (scenario.name, scenario.duration_s, scenario.seed) == ('eight', 12.5, 7)
    assert scenario.record_topics == ('/ground_truth', '/odom')
    assert scenario.pass_criteria == {'cross_track_rms_m': 0.1}
    assert scenario.node_parameters['vehicle_sim'] == {
        'model': 'differential', 'model_params.differential.track': 0.5}
    assert scenario.node_parameters['controller'] == {'k_x': 3.0}
    assert scenario.node_parameters['localization'] == {}


def test_numbers_in_exponent_notation_are_numbers_as_in_ros(tmp_path):
    """``1e3`` is a string to YAML 1.1 but a double to ROS 2's params file parser: the
    scenario and its params file take it as the nodes would."""
    write(tmp_path, """
        vehicle_sim:
          ros__parameters:
            model_params: {differential: {track: 5e-1}}
        """, 'robot.yaml')
    path = write(tmp_path, """
        duration: 1e1
        params_file: robot.yaml
        pass_criteria: {cross_track_rms_m: 1.5e-1}
        nodes:
          controller: {k_x: 2E0}
        """)
    scenario = load_scenario(path, SPECS, METRICS)
    assert scenario.duration_s == 10.0 and scenario.pass_criteria == {'cross_track_rms_m': 0.15}
    assert scenario.node_parameters['vehicle_sim'] == {'model_params.differential.track': 0.5}
    assert scenario.node_parameters['controller'] == {'k_x': 2.0}


@pytest.mark.parametrize('text, fragment', [
    ('- vehicle_sim\n', 'must map node names to sections'),
    ('vehicle_sim: 3\n', 'section vehicle_sim: a value before ros__parameters'),
    ('vehicle_sim: {ros__parameters: [1]}\n',
     'section vehicle_sim: ros__parameters must map parameter names to values'),
    ('vehicle_sim: [unclosed\n', 'not a readable YAML file'),
    # found in review: ignored, and the run drove the default model (ROS refuses the file)
    ('vehicle_sim: {params: {model: omni}}\n',
     'section vehicle_sim/params/model: a value before ros__parameters'),
    ('vehicle_sim: {ros__parameters: {}, model: omni}\n',
     'section vehicle_sim: model beside ros__parameters'),
    ('vehicle_sim: {model: omni, ros__parameters: {}}\n',
     'section vehicle_sim/model: a value before ros__parameters'),
    ('vehicle-sim: {ros__parameters: {model: omni}}\n',
     "section vehicle-sim: 'vehicle-sim' is not a ROS name"),
    ('vehicle_sim:\n  ros__parameters: {model: bicycle, model: differential}\n',
     "the key 'model' is given twice in one mapping (line 2, columns 21 and 37)"),
    ('vehicle_sim: {ros__parameters: {a: {b: 1}, a.b: 2}}\n', 'section vehicle_sim: a.b: given '
                                                              'twice'),
])
def test_a_params_file_of_another_shape_is_named(tmp_path, text, fragment):
    write(tmp_path, text, 'robot.yaml')
    path = write(tmp_path, 'params_file: robot.yaml\n')
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, SPECS, METRICS)
    assert fragment in str(info.value) and 'robot.yaml' in str(info.value)


def test_a_value_out_of_range_is_named_where_it_is_given_with_the_value(tmp_path):
    """Found in review: a params file's value out of range was blamed on the scenario's
    ``nodes:`` (which the scenario did not have), its value not shown."""
    write(tmp_path, 'vehicle_sim: {ros__parameters: {model_params: {differential: '
                    '{track: -0.5}}}}\n', 'robot.yaml')
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, 'params_file: robot.yaml\n'), SPECS, METRICS)
    assert str(info.value) == (f'params_file {tmp_path / "robot.yaml"}: vehicle_sim.model_params.'
                               'differential.track: -0.5 must be a finite number in (0, inf)')
    path = write(tmp_path, 'nodes: {vehicle_sim: {model: tank}}\n')
    with pytest.raises(ScenarioError, match=f"^{path}: nodes.vehicle_sim.model: 'tank' must be "
                                            "one of 'bicycle', 'differential'$"):
        load_scenario(path, SPECS, METRICS)


def test_a_rule_across_parameters_is_named_where_its_values_are_given(tmp_path):
    """Found in review: a params_file breaking a node's rule across parameters was blamed on the
    scenario's nodes:, which it did not have."""
    def vehicle_rule(values):
        if values.get('model') == 'bicycle' and 'model_params.differential.track' in values:
            raise ParameterError('model_params.differential.track', 0.5, 'is for a differential')

    checks = {node: (vehicle_rule if node == 'vehicle_sim' else None) for node in SPECS}
    write(tmp_path, 'vehicle_sim: {ros__parameters: {model: bicycle, model_params: '
                    '{differential: {track: 0.5}}}}\n', 'robot.yaml')
    with pytest.raises(ScenarioError, match=r'^params_file .*robot.yaml: vehicle_sim.model_params'
                                            r'.differential.track: is for a differential$'):
        load_scenario(write(tmp_path, 'params_file: robot.yaml\n'), SPECS, METRICS, checks)
    # found in review: with nodes: giving the node anything, the file's key was named in nodes:
    path = write(tmp_path, 'params_file: robot.yaml\nnodes: {vehicle_sim: {model: bicycle}}\n')
    with pytest.raises(ScenarioError, match=r'^params_file .*robot.yaml: vehicle_sim.model_params'
                                            r'.differential.track: is for a differential$'):
        load_scenario(path, SPECS, METRICS, checks)
    path = write(tmp_path, 'params_file: robot.yaml\n'
                           'nodes: {vehicle_sim: {model_params: {differential: {track: 0.6}}}}\n')
    with pytest.raises(ScenarioError, match=f'^{path}: nodes.vehicle_sim.model_params.differential'
                                            '.track: is for a differential$'):
        load_scenario(path, SPECS, METRICS, checks)  # the named key is in nodes: too


def test_a_rule_naming_a_parameter_at_its_default_shows_the_default(tmp_path):
    """Found in review: a params_file's step_rate below the default pub_rate was blamed on a
    nodes.vehicle_sim.pub_rate the scenario did not have, without its value."""
    def vehicle_rule(values):
        pub_rate, step_rate = values.get('pub_rate', 50.0), values.get('step_rate', 1000.0)
        if pub_rate > step_rate:
            raise ParameterError('pub_rate', pub_rate, f'must be <= step_rate ({step_rate:g} Hz)')

    checks = {node: (vehicle_rule if node == 'vehicle_sim' else None) for node in SPECS}
    write(tmp_path, 'vehicle_sim: {ros__parameters: {step_rate: 10.0}}\n', 'robot.yaml')
    for text in ('params_file: robot.yaml\n',
                 'params_file: robot.yaml\nnodes: {vehicle_sim: {model: bicycle}}\n',
                 'nodes: {vehicle_sim: {step_rate: 10.0}}\n'):
        path = write(tmp_path, text)
        with pytest.raises(ScenarioError) as info:
            load_scenario(path, SPECS, METRICS, checks)
        assert str(info.value) == (f'{path}: nodes.vehicle_sim.pub_rate (its default, 50.0): '
                                   'must be <= step_rate (10 Hz)')


def test_sections_nested_in_namespaces_are_read_as_ros_reads_them(tmp_path):
    """A robot's one params file also holds Nav2's sections, whose namespace is a level of its
    own (as in params/nav2/stock_jazzy.yaml): those are not wheelsim's, nor is a vehicle_sim
    nested in a robot's namespace (ROS gives it to /robot1/vehicle_sim, not to the run's
    /vehicle_sim); ``/**/vehicle_sim`` is the run's."""
    write(tmp_path, """
        local_costmap:
          local_costmap:
            ros__parameters: {footprint: '[[0.1, 0.1]]', plugins: [static_layer]}
        robot1:
          vehicle_sim:
            ros__parameters: {model: bicycle}
        /**/vehicle_sim:
          ros__parameters: {model_params: {differential: {track: 0.5}}}
        """, 'robot.yaml')
    scenario = load_scenario(write(tmp_path, 'params_file: robot.yaml\n'), SPECS, METRICS)
    assert scenario.node_parameters['vehicle_sim'] == {'model_params.differential.track': 0.5}


def test_sections_of_namespaced_robots_are_not_the_runs(tmp_path):
    """Found in review: ``/robot1/vehicle_sim`` and ``/robot2/vehicle_sim`` were both taken (by
    the last level of the name), the later one winning, for the run's /vehicle_sim. A file
    that gives the run's nodes nothing is refused (the run would take every default)."""
    sections = """
        /robot1/vehicle_sim:
          ros__parameters: {model: differential}
        /robot2/vehicle_sim:
          ros__parameters: {model: bicycle}
        /*/controller:
          ros__parameters: {k_x: 2.0}
        """
    write(tmp_path, sections, 'robot.yaml')
    with pytest.raises(ScenarioError, match=r'robot.yaml: no section is for /vehicle_sim, '
                       r'/localization, /planner, /controller \(sections: /robot1/vehicle_sim, '
                       r"/robot2/vehicle_sim, /\*/controller\): the run's nodes, in no "
                       r'namespace$'):
        load_scenario(write(tmp_path, 'params_file: robot.yaml\n'), SPECS, METRICS)
    # found in review: an empty file, or one for every node that they do not use, is no error
    for text in ('', '/**: {ros__parameters: {use_sim_time: true}}\n'):
        write(tmp_path, text, 'robot.yaml')
        scenario = load_scenario(write(tmp_path, 'params_file: robot.yaml\n'), SPECS, METRICS)
        assert scenario.node_parameters['vehicle_sim'] == {}
    write(tmp_path, sections + "/planner: {ros__parameters: {waypoints: [1.0, 0.0, .nan]}}\n",
          'robot.yaml')
    scenario = load_scenario(write(tmp_path, 'params_file: robot.yaml\n'), SPECS, METRICS)
    assert scenario.node_parameters['vehicle_sim'] == {}
    assert scenario.node_parameters['controller'] == {}


def test_a_section_for_any_node_gives_each_node_what_it_declares(tmp_path):
    write(tmp_path, """
        /*:
          ros__parameters: {model: differential, k_x: 2.0}
        /**/localization:
          ros__parameters: {mode: noisy}
        """, 'robot.yaml')
    scenario = load_scenario(write(tmp_path, 'params_file: robot.yaml\n'), SPECS, METRICS)
    assert scenario.node_parameters['vehicle_sim'] == {'model': 'differential'}
    assert scenario.node_parameters['controller'] == {'k_x': 2.0}
    assert scenario.node_parameters['localization'] == {'mode': 'noisy'}


def test_a_folder_given_as_params_file_is_named_as_a_folder(tmp_path):
    (tmp_path / 'robot').mkdir()
    with pytest.raises(ScenarioError, match='params_file: .*robot is a folder, not a file'):
        load_scenario(write(tmp_path, 'params_file: robot\n'), SPECS, METRICS)


@pytest.mark.parametrize('text, fragment', [
    ('durations: 3', "durations: unknown scenario key (did you mean duration?)"),
    ('duration: -1', 'duration: -1 must be a number of seconds'),
    ('duration: .nan', 'duration'),
    ('seed: 1.5', 'seed: 1.5 must be an integer in [0, 2**63-1]'),
    # beyond 64 bits ROS reads a number as a double (found in review: shown as 9.2e+18)
    ('seed: 9223372036854775808',
     'seed: 9223372036854775808 must be an integer in [0, 2**63-1]'),
    ('seed: 5.0', 'seed: 5.0 must be an integer in [0, 2**63-1]'),
    # found in review: Python's None and True in the message
    ('seed:', 'seed: null must be an integer in [0, 2**63-1]'),
    ('seed: true', 'seed: true must be an integer in [0, 2**63-1]'),
    ('record: 5', 'record: 5 must be "all", "none" or a list'),
    # found in review: Python's None and True in the message
    ('record:', 'record: null must be "all", "none" or a list'),
    ('duration: true', 'duration: true must be a number of seconds'),
    # found in review: a duration shorter than a step ran nothing and passed
    ('duration: 1e-300', 'duration: 1e-300 must be a number of seconds in [0.001, 86400]'),
    # found in review: a typo recorded nothing of that topic, without a word
    ('record: [odom, odm]', 'record: /odm: no node of a run publishes it (did you mean /odom?)'),
    ('record: [diagnostics]', 'record: /diagnostics: no node of a run publishes it'),
    # found in review: a topic named twice (also as odom and /odom) was taken without a word
    ('record: [odom, tf, /odom]', 'record: /odom: given twice: give it once'),
    ('pass_criteria: {cross_track_rms: 1}', 'pass_criteria.cross_track_rms: unknown metric '
                                            '(did you mean cross_track_rms_m?)'),
    ('pass_criteria: {goal_error_m: high}', "pass_criteria.goal_error_m: 'high' must be"),
    # found in review: a key that is no string (1, true, ~) gave a traceback
    ('pass_criteria: {1: 0.1}', 'pass_criteria.1: unknown metric (known: '),
    ('pass_criteria: {true: 0.1}', 'pass_criteria.true: unknown metric (known: '),  # a name
    # found in review: a negative bound was taken, and the run could never pass
    ('pass_criteria: {cross_track_rms_m: -0.1}',
     'pass_criteria.cross_track_rms_m: -0.1 must be a finite number >= 0 (no metric is negative)'),
    # found in review: each was read as no criteria, and the run passed
    *[(f'pass_criteria: {value}', f'pass_criteria: {shown} must map metric names to bounds (or '
                                  'be left empty: none)')
      for value, shown in (('0', '0'), ('false', 'false'), ('[]', '[]'), ('""', "''"))],
    *[(f'nodes: {value}', f'nodes: {shown} must map node names (vehicle_sim, localization, '
                          'planner, controller) to parameters (or be left empty: none)')
      for value, shown in (('0', '0'), ('[]', '[]'))],
    ('params_file: /dev/null', 'params_file: /dev/null is not a regular file'),
    ('nodes: {controler: {}}', 'nodes.controler: unknown node (did you mean controller?)'),
    ('nodes: {controller: {kx: 1.0}}', 'nodes.controller.kx: controller has no such parameter'),
    ('nodes: {localization: {mode: fancy}}', "nodes.localization.mode: 'fancy' must be one of"),
    ('params_file: missing.yaml', 'params_file:'),
    # found in review: read as the path 'None', and a number as a file name
    ('params_file:', 'params_file: null must be the path of a ROS params file'),
    ('params_file: 5', 'params_file: 5 must be the path of a ROS params file'),
    ('map:', 'map: null must name a map_server YAML file'),
    ('[1, 2]', 'a scenario is a mapping'),
    # found in review: the last of two keys won without a word
    ('duration: 2.0\nduration: 5.0',
     "the key 'duration' is given twice in one mapping (lines 1 and 2): give it once"),
    ('nodes: {vehicle_sim: {model_params: {differential: {track: 0.5}},\n'
     '                      model_params.differential.track: 0.3}}',
     'nodes.vehicle_sim.model_params.differential.track: given twice (also as 0.5), nested and '
     'dotted'),
    ('name: [unclosed', 'not valid YAML'),
    # found in review: both ended in a RecursionError's traceback
    pytest.param('duration: ' + '[' * 2000 + ']' * 2000,
                 'not valid YAML: nested more than 100 sequences or mappings deep', id='deep'),
    ('duration: &a [*a]', 'not valid YAML: the alias *a is inside what &a names'),
])
def test_bad_scenarios_name_the_key(tmp_path, text, fragment):
    path = write(tmp_path, text + '\n')
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, SPECS, METRICS)
    assert fragment in str(info.value) and '\n' not in str(info.value)
    assert str(path) in str(info.value)


def test_a_file_that_is_not_utf8_is_named_with_the_byte(tmp_path):
    path = tmp_path / 'latin1.yaml'
    path.write_bytes('name: café\nduration: 5\n'.encode('latin-1'))
    with pytest.raises(ScenarioError, match=r'latin1.yaml: not UTF-8 text \(byte 0xe9 at '
                                            r'position 9\)'):
        load_scenario(path, SPECS, METRICS)


def test_an_overlong_name_is_refused_before_the_run(tmp_path):
    with pytest.raises(ScenarioError, match='name: must be at most 200 bytes'):
        load_scenario(write(tmp_path, 'name: ' + 'a' * 300 + '\n'), SPECS, METRICS)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ScenarioError, match='cannot read scenario'):
        load_scenario(tmp_path / 'nope.yaml', SPECS, METRICS)


def test_overrides_for_sweeps(tmp_path):
    scenario = load_scenario(write(tmp_path, 'duration: 1\n'), SPECS, METRICS)
    seen = []
    swept = with_overrides(scenario, {'controller.k_x': 5.0},
                           lambda node, parameters, given: seen.append((node, dict(parameters),
                                                                      dict(given))))
    assert swept.node_parameters['controller']['k_x'] == 5.0
    assert 'k_x' not in scenario.node_parameters['controller']
    assert seen == [('controller', {'k_x': 5.0}, {'k_x': 5.0})]  # the whole set, once per node
    with pytest.raises(ScenarioError, match='expected seed or <node>.<parameter>'):
        with_overrides(scenario, {'k_x': 1.0}, lambda *a: None)
    with pytest.raises(ScenarioError, match=r'\(did you mean controller\.k_x\?\)'):
        with_overrides(scenario, {'controler.k_x': 1.0}, lambda *a: None)  # found in review


def test_seed_override_sets_the_scenario_seed(tmp_path):
    scenario = load_scenario(write(tmp_path, 'duration: 1\nseed: 3\n'), SPECS, METRICS)
    assert with_overrides(scenario, {'seed': 9}, lambda *a: None).seed == 9
    assert with_overrides(scenario, {'seed': 2**63 - 1}, lambda *a: None).seed == 2**63 - 1
    for bad in (-1, 2**63):  # the nodes' seed range: checked here, before any run starts
        with pytest.raises(ScenarioError, match=rf'--param seed: {bad} must be an integer in '
                                                r'\[0, 2\*\*63-1\]'):
            with_overrides(scenario, {'seed': bad}, lambda *a: None)


@pytest.mark.parametrize('key, other', [
    ('localization.seed', "the scenario's seed"),
    ('vehicle_sim.seed', "the scenario's seed"),
    ('vehicle_sim.be_reference_clock', 'wheelsim run'),
    ('controller.use_sim_time', 'wheelsim run'),
])
def test_an_override_the_run_would_replace_is_an_error_naming_both(tmp_path, key, other):
    scenario = load_scenario(write(tmp_path, 'duration: 1\n'), SPECS, METRICS)
    with pytest.raises(ScenarioError, match=f'--param {key}: overridden in every run by {other}'):
        with_overrides(scenario, {key: 2}, lambda *a: None)


def test_a_node_seed_in_the_scenario_is_an_error_naming_both(tmp_path):
    path = write(tmp_path, 'duration: 1\nnodes: {localization: {seed: 4}}\n')
    with pytest.raises(ScenarioError, match="nodes.localization.seed: overridden in every run by "
                                            "the scenario's seed"):
        load_scenario(path, SPECS, METRICS)


def test_a_params_file_seed_is_replaced_by_the_scenario_seed_and_listed(tmp_path):
    write(tmp_path, 'localization:\n  ros__parameters: {seed: 4, mode: noisy}\n', 'robot.yaml')
    path = write(tmp_path, 'name: lab\nduration: 1\nseed: 6\nparams_file: robot.yaml\n')
    scenario = load_scenario(path, SPECS, METRICS)
    assert (scenario.name, scenario.seed) == ('lab', 6)
    assert scenario.node_parameters['localization'] == {'mode': 'noisy'}
    assert scenario.params_file_replaced == {'localization.seed': (
        "which every run sets itself: the scenario's seed (sweep it with --param seed=...)")}


def test_a_params_file_of_a_reference_clock_runs_with_its_clock_parameters_listed(tmp_path):
    """Found in review: a params file of a live launch's reference clock (``ros2 param dump``
    gives ``real_time_factor: 1.0``) failed every run once it had started (exit 1): vehicle_sim,
    not the clock in a run, refused the value. The run drops it, and says so."""
    from wheelsim.run.runner import node_parameter_specs, simulate

    write(tmp_path, 'vehicle_sim:\n  ros__parameters: {be_reference_clock: true, '
          'real_time_factor: 1.0, clock_rate: 100.0, model: differential}\n', 'robot.yaml')
    path = write(tmp_path, 'duration: 0.5\nparams_file: robot.yaml\n')
    scenario = load_scenario(path, node_parameter_specs(), METRICS)
    clock = 'which no run uses: a run is its own clock (--real-time-factor paces it)'
    assert scenario.params_file_replaced == {
        'vehicle_sim.be_reference_clock': 'which every run sets itself: wheelsim run (the '
                                          'lock-step executor is the clock)',
        'vehicle_sim.real_time_factor': clock, 'vehicle_sim.clock_rate': clock}
    assert scenario.node_parameters['vehicle_sim'] == {'model': 'differential'}
    published: set[str] = set()  # vehicle_sim starts and runs
    simulate(scenario, None, show_progress=False,
             reader=lambda topic, _msg, _time_ns: published.add(topic))
    assert '/ground_truth' in published


def test_the_recordable_topics_are_what_a_run_publishes(tmp_path):
    """RECORDABLE_TOPICS holds every topic a run in a world publishes (the world's too)."""
    from wheelsim.run.recording import IGNORED_TOPICS
    from wheelsim.run.runner import node_parameter_specs, simulate

    path = write(tmp_path, """
        duration: 2.0
        map: room
        nodes:
          vehicle_sim: {model: differential}
          planner: {waypoints: [1.0, 0.0, .nan]}
        """)
    scenario = load_scenario(path, node_parameter_specs(), METRICS)
    published: set[str] = set()
    simulate(scenario, None, show_progress=False,
             reader=lambda topic, _msg, _time_ns: published.add(topic))
    assert {'/scan', '/map', '/footprint', '/cmd_vel'} <= published
    assert published - IGNORED_TOPICS <= set(RECORDABLE_TOPICS), published


@pytest.mark.parametrize('layer', ['nodes', 'params_file'])
def test_an_array_reaches_the_node_as_from_a_params_file_and_a_mixed_one_is_refused(tmp_path,
                                                                                      layer):
    """The same text gives the same value in a params file, in nodes: and in --param. ROS
    types an array by its items and refuses one that mixes integers and doubles
    (rcl_yaml_param_parser: "Sequence should be of same type"), so wheelsim refuses it too."""
    def scenario(waypoints):
        write(tmp_path, f'planner:\n  ros__parameters:\n    waypoints: {waypoints}\n', 'p.yaml')
        text = ('params_file: p.yaml\n' if layer == 'params_file'
                else f'nodes:\n  planner: {{waypoints: {waypoints}}}\n')
        return load_scenario(write(tmp_path, text), SPECS, METRICS)

    def override(value):
        base = load_scenario(write(tmp_path, 'duration: 1\n', 'base.yaml'), SPECS, METRICS)

        def check(node, parameters, given):
            check_node_parameters('--param', 'planner.', node, parameters, SPECS[node], None)
        return with_overrides(base, {'planner.waypoints': value}, check)

    for text in ('[1, 0, 2]', '[1.0, 0.0, .nan]', '[1e3, 0.5, 0.0]'):
        given = scenario(text).node_parameters['planner']['waypoints']
        [value] = parse_axis(f'planner.waypoints={text}').values
        assert repr(value) == repr(given)  # integers stay integers (a ROS integer array)
        assert [type(v) for v in value] == [type(v) for v in given]
        assert override(value).node_parameters['planner']['waypoints'] is value
    for text, integer in (('[1, 0, .nan]', 1), ('[1.0, 2]', 2), ('[.nan, 0, 1]', 0)):
        with pytest.raises(ScenarioError, match=r'planner(\.|: )waypoints: the array \[.*\] mixes '
                                                'integers and doubles, which ROS refuses'):
            scenario(text)
        with pytest.raises(ScenarioError, match=r'--param: planner.waypoints: the array .* mixes '
                                                f'integers and doubles.*write {integer} as '
                                                f'{integer}.0$'):
            override(parse_axis(f'planner.waypoints={text}').values[0])



def test_the_parameters_nodes_gives_are_kept_apart_from_the_params_file_s(tmp_path):
    """What nodes: gives is checked to be used by the command's runs (check_used); a params
    file (shared with live launches, e.g. a preset for every model) may hold unused ones."""
    write(tmp_path, """
        vehicle_sim:
          ros__parameters:
            model_params: {differential: {track: 0.5}}
        """, 'robot.yaml')
    path = write(tmp_path, """
        params_file: robot.yaml
        nodes:
          vehicle_sim: {model: differential}
          controller: {k_x: 2.0}
        """)
    scenario = load_scenario(path, SPECS, METRICS)
    assert scenario.nodes_given == {'vehicle_sim': ('model',), 'controller': ('k_x',)}
    path = write(tmp_path, 'nodes: {controller: , planner: {waypoints: [1.0, 0.0, .nan]}}\n')
    assert load_scenario(path, SPECS, METRICS).node_parameters['controller'] == {}  # empty
    assert scenario.node_parameters['vehicle_sim'] == {'model_params.differential.track': 0.5,
                                                       'model': 'differential'}
