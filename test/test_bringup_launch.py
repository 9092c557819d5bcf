"""Launch files: valid Python, nav2_bringup style, naming only executables and files that exist.

Here (no ROS install) the files are checked statically (bringup_support); with a ROS install the
launch descriptions are also generated and sim.launch.py's node set is built (last tests).
"""

import importlib.util
import os
import re
import subprocess
import sys

import pytest
from bringup_support import (
    EXTERNAL_EXECUTABLES,
    LAUNCH_DIR,
    PARAMS_DIR,
    REPO,
    SHARE,
    SUPPORTED_DISTROS,
    VEHICLE_PRESETS,
    console_scripts,
    declared_arguments,
    installed_files,
    launch_files,
    launch_tooling_problem,
    parse_launch_file,
)

LAUNCH_FILES = launch_files()
IDS = [p.name for p in LAUNCH_FILES]
PRESET_NAMES = [path.stem for path in VEHICLE_PRESETS]


def test_the_issue_s_launch_files_exist():
    names = {p.name for p in LAUNCH_FILES}
    assert {'sim.launch.py', 'demo.launch.py', 'nav2.launch.py', 'nav2_bringup.launch.py',
            'teleop.launch.py', 'multi_robot.launch.py'} <= names


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=IDS)
def test_launch_file_compiles_and_defines_generate_launch_description(path):
    compile(path.read_text(), str(path), 'exec')
    assert parse_launch_file(path).has_generate, f'{path.name}: no generate_launch_description()'


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=IDS)
def test_every_argument_is_declared_with_a_description_and_a_default(path):
    launch = parse_launch_file(path)
    assert launch.arguments or launch.includes, f'{path.name} declares no launch argument'
    for argument in launch.arguments.values():
        where = f'{path.name}:{argument.line} argument {argument.name!r}'
        assert argument.description and len(argument.description) > 10, f'{where}: description'
        assert argument.defaults is not None, f'{where}: default value is not static'


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=IDS)
def test_every_launch_configuration_used_is_declared_in_the_same_file(path):
    launch = parse_launch_file(path)
    for pattern, line in launch.configurations:
        matches = [name for name in launch.arguments if re.fullmatch(pattern, name)]
        assert matches, f'{path.name}:{line}: LaunchConfiguration {pattern!r} is never declared'


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=IDS)
def test_nodes_name_only_declared_or_known_executables(path):
    scripts = console_scripts()
    for node in parse_launch_file(path).nodes:
        where = f'{path.name}:{node.line}'
        assert node.package and node.executable, f'{where}: package/executable not constants'
        if node.package == 'wheelsim':
            assert node.executable in scripts, \
                f'{where}: wheelsim has no executable {node.executable!r} (setup.py: {scripts})'
        else:
            assert (node.package, node.executable) in EXTERNAL_EXECUTABLES, \
                f'{where}: {node.package}/{node.executable} is not a known external executable'


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=IDS)
def test_installed_files_named_exist_and_are_installed_there(path):
    installed = installed_files()
    for relatives, line in parse_launch_file(path).share_paths:
        assert relatives is not None, f'{path.name}:{line}: an installed path is not static'
        for relative in relatives:
            assert (REPO / relative).is_file(), f'{path.name}:{line}: {relative} does not exist'
            assert SHARE + relative in installed, (
                f'{path.name}:{line}: {relative} is not installed as {SHARE}{relative} '
                '(setup.py data_files)')


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=IDS)
def test_included_launch_files_accept_the_arguments_passed(path):
    for include in parse_launch_file(path).includes:
        assert include.targets is not None and (include.targets or include.external), (
            f'{path.name}:{include.line}: included file is not static')
        # Other packages' launch files (nav2_bringup's): test_bringup_nav2_stock.py checks
        # their arguments against the Nav2 sources' facts.
        for target in include.targets:
            accepted = declared_arguments(target)
            unknown = set(include.arguments) - accepted
            assert not unknown, f'{path.name}:{include.line}: {target} declares no {unknown}'


def test_every_bringup_folder_file_is_installed_under_the_same_relative_path():
    installed = installed_files()
    for folder in ('launch', 'params', 'rviz', 'plotjuggler'):
        for source in sorted((REPO / folder).rglob('*')):
            if source.is_file() and '__pycache__' not in source.parts:
                relative = source.relative_to(REPO).as_posix()
                assert installed.get(SHARE + relative) == source, (
                    f'{relative} is not installed as {SHARE}{relative}: setup.py must install '
                    'the bring-up folders keeping their sub-folders')


def test_preset_argument_documents_every_vehicle_preset():
    description = parse_launch_file(REPO / 'launch' / 'sim.launch.py').arguments[
        'preset'].description
    listed = set(re.findall(r'[a-z][a-z0-9_]+', description)) & set(PRESET_NAMES)
    assert listed == set(PRESET_NAMES), f'preset description lists {listed}'


def test_nav2_distro_parameters_exist_for_every_supported_distro():
    launch = parse_launch_file(REPO / 'launch' / 'nav2.launch.py')
    defaults = launch.arguments['nav2_distro_params_file'].defaults
    assert sorted(defaults) == sorted(f'<share:wheelsim>/params/nav2/reduced_{d}.yaml'
                                      for d in SUPPORTED_DISTROS)


def test_static_analysis_catches_a_misnamed_executable_and_file(tmp_path):
    """The checks above can fail: a broken copy of sim.launch.py is caught."""
    text = (REPO / 'launch' / 'sim.launch.py').read_text()
    broken = tmp_path / 'broken.launch.py'
    broken.write_text(text.replace("executable='vehicle_sim'", "executable='vehicle_simm'")
                      .replace("'wheelsim.rviz'", "'missing.rviz'"))
    launch = parse_launch_file(broken)
    assert 'vehicle_simm' in {n.executable for n in launch.nodes}
    assert 'vehicle_simm' not in console_scripts()
    assert ['rviz/missing.rviz'] in [paths for paths, _ in launch.share_paths]
    assert not (REPO / 'rviz' / 'missing.rviz').exists()


# --- with a ROS 2 install ------------------------------------------------------------------

LAUNCH_PROBLEM = launch_tooling_problem()


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('path', LAUNCH_FILES, ids=IDS)
def test_launch_description_generates_with_described_arguments(path):
    from launch.launch_description_sources import (
        get_launch_description_from_python_launch_file,
    )

    description = get_launch_description_from_python_launch_file(str(path))
    arguments = description.get_launch_arguments()
    assert arguments, f'{path.name}: no launch argument (included ones count)'
    assert all(argument.description for argument in arguments)


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('stamped, expected', [
    ('false', {'stamped': False}), ('False', {'stamped': False}), ('0', {'stamped': False}),
    ('true', {'stamped': True, 'frame_id': 'base_link'}),
    ('True', {'stamped': True, 'frame_id': 'base_link'}),
    (' 1 ', {'stamped': True, 'frame_id': 'base_link'})])
def test_teleop_launch_passes_frame_id_only_when_stamped(stamped, expected):
    """teleop_twist_keyboard 2.4.1 (Jazzy and Kilted) raises "'frame_id' can only be set when
    'stamped' is True" for a frame_id without stamped (bring-up review, item 1); run by hand
    with both parameter sets it published Twist and TwistStamped in base_link. ``stamped`` is
    read as IfCondition reads it: ``yes`` is refused, not taken for true."""
    spec = importlib.util.spec_from_file_location('wheelsim_teleop_launch',
                                                  REPO / 'launch' / 'teleop.launch.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.teleop_parameters(stamped, 'base_link') == expected
    with pytest.raises(RuntimeError, match='stamped:=yes is invalid: must be one of true, 1, '
                                           'false, 0'):
        module.teleop_parameters('yes', 'base_link')


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
def test_teleop_launch_refuses_a_terminal_that_is_not_installed():
    """Found in review: without xterm the default terminal:='xterm -e' gave launch's traceback
    (FileNotFoundError), no keyboard node and exit 0."""
    spec = importlib.util.spec_from_file_location('wheelsim_teleop_launch',
                                                  REPO / 'launch' / 'teleop.launch.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(RuntimeError, match=r"^terminal:=no-such-terminal -e: no-such-terminal is "
                                           r"not installed; install it, .*nothing was started$"):
        module.terminal_prefix('no-such-terminal -e')
    with pytest.raises(RuntimeError, match=r"^terminal:=xterm -e 'x: cannot be split into words "
                                           r'\(No closing quotation\); nothing was started$'):
        module.terminal_prefix("xterm -e 'x")
    assert module.terminal_prefix('sh -c') == 'sh -c'
    # Found in review: the docs offered an empty terminal (launch's own), which ros2 launch
    # refuses to parse and where the keyboard node gets no terminal: a blank command was run.
    for blank in ('', ' ', '""'):
        with pytest.raises(RuntimeError, match=r'names no command; the keyboard node reads keys '
                                               r'from a terminal of its own'):
            module.terminal_prefix(blank)


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('preset', PRESET_NAMES)
def test_sim_launch_builds_its_nodes_and_a_parsing_urdf(preset):
    from launch.launch_context import LaunchContext
    from urdf_parser_py.urdf import URDF

    from wheelsim.bringup.params_files import robot_description, vehicle_sim_values

    spec = importlib.util.spec_from_file_location('wheelsim_sim_launch',
                                                  REPO / 'launch' / 'sim.launch.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    params_file = str(PARAMS_DIR / f'{preset}.yaml')
    values = vehicle_sim_values([params_file], 'robot1', {'frame_prefix': 'robot1/'})
    robot = URDF.from_xml_string(robot_description(params_file, values))
    assert robot.get_root() == 'robot1/base_link'

    context = LaunchContext()
    context.launch_configurations.update({
        'params_file': params_file, 'overrides_file': '', 'model': '', 'map_yaml': '',
        'publish_map': '',
        'frame_prefix': '', 'localization_mode': '', 'real_time_factor': '', 'map_to_odom': 'true',
        'log_level': 'info', 'tracking': 'false', 'use_sim_time': 'false'})
    sim = [('wheelsim', 'vehicle_sim'), ('wheelsim', 'localization'),
           ('robot_state_publisher', 'robot_state_publisher')]
    nodes = module._wheelsim_nodes(context)
    assert [(n.node_package, n.node_executable) for n in nodes] == sim
    context.launch_configurations['tracking'] = 'True'
    nodes = module._wheelsim_nodes(context)
    assert [(n.node_package, n.node_executable) for n in nodes] == [
        *sim, ('wheelsim', 'planner'), ('wheelsim', 'controller')]


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize(('argument', 'in_file', 'tracking', 'refused'), [
    ('false', '', 'false', True), ('true', '', 'true', False),
    # found in review: a params file giving the nodes use_sim_time is clock mode 3 too
    ('false', '/**:\n  ros__parameters:\n    use_sim_time: true\n', 'true', False),
    # found in review: given the localization alone, the loop stayed on wall time
    ('false', 'localization:\n  ros__parameters:\n    use_sim_time: true\n', 'false', False),
    ('false', 'localization:\n  ros__parameters:\n    use_sim_time: true\n', 'true', True),
    ('false', '/**/planner:\n  ros__parameters:\n    use_sim_time: true\n'
              '/**/controller:\n  ros__parameters:\n    use_sim_time: true\n', 'true', False),
    # the diff review: the argument true, a file's false for one node (which wins there)
    ('true', 'controller:\n  ros__parameters:\n    use_sim_time: false\n', 'true', True)])
def test_sim_launch_reference_clock_needs_the_nodes_on_sim_time(tmp_path, argument, in_file,
                                                                  tracking, refused):
    from launch.launch_context import LaunchContext

    spec = importlib.util.spec_from_file_location('wheelsim_sim_launch',
                                                  REPO / 'launch' / 'sim.launch.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    overrides = tmp_path / 'clock.yaml'
    overrides.write_text('vehicle_sim:\n  ros__parameters:\n    be_reference_clock: true\n'
                         + in_file)
    context = LaunchContext()
    context.launch_configurations.update({
        'params_file': str(PARAMS_DIR / 'indoor_differential.yaml'),
        'overrides_file': str(overrides), 'model': '', 'map_yaml': '', 'publish_map': '',
        'frame_prefix': '', 'localization_mode': '', 'real_time_factor': '',
        'map_to_odom': 'true', 'log_level': 'info', 'tracking': tracking,
        'use_sim_time': argument})
    if refused:
        with pytest.raises(RuntimeError, match='which the other nodes follow only with '
                                               'use_sim_time:=true'):
            module._wheelsim_nodes(context)
    else:
        assert len(module._wheelsim_nodes(context)) == 3 + 2 * (tracking == 'true')


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize(('sections', 'namespace', 'tracking', 'refused'), [
    ('vehiclesim', '', 'false', '/vehicle_sim, /localization (sections: vehiclesim)'),
    ('vehicle_sim', 'robot1', 'false',
     '/robot1/vehicle_sim, /robot1/localization (sections: vehicle_sim)'),
    ('planner', '', 'false', '/vehicle_sim, /localization (sections: planner)'),
    ('planner', '', 'true', None), ('vehicle_sim', '', 'false', None),
    ('/**/vehicle_sim', 'robot1', 'false', None), ('robot1/localization', 'robot1', 'false', None),
    ('/**', 'robot1', 'false', None)])
def test_sim_launch_refuses_a_params_file_with_no_section_for_its_nodes(
        tmp_path, sections, namespace, tracking, refused):
    """Found in review: a params file whose section names no node of the launch (mistyped, or
    written for no namespace and launched in one) left every node at its defaults without a
    word; ``wheelsim run`` refused it already."""
    from launch.launch_context import LaunchContext

    spec = importlib.util.spec_from_file_location('wheelsim_sim_launch',
                                                  REPO / 'launch' / 'sim.launch.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    mine = tmp_path / 'mine.yaml'
    mine.write_text(f'{sections}:\n  ros__parameters:\n    use_sim_time: false\n')
    context = LaunchContext()
    context.launch_configurations.update({
        'params_file': str(PARAMS_DIR / 'indoor_differential.yaml'),
        'overrides_file': str(mine), 'model': '', 'map_yaml': '', 'publish_map': '',
        'frame_prefix': '', 'localization_mode': '', 'real_time_factor': '',
        'map_to_odom': 'true', 'log_level': 'info', 'tracking': tracking,
        'use_sim_time': 'false', 'ros_namespace': namespace})
    if refused is None:
        assert len(module._wheelsim_nodes(context)) == 3 + 2 * (tracking == 'true')
        return
    with pytest.raises(RuntimeError, match=f'^{re.escape(str(mine))}: no section is for '
                                           f'{re.escape(refused)}: a section vehicle_sim is for '
                                           '/vehicle_sim only, .*; nothing was started$'):
        module._wheelsim_nodes(context)
    context.launch_configurations['overrides_file'] = ''  # the preset alone: its sections apply
    assert len(module._wheelsim_nodes(context)) == 3 + 2 * (tracking == 'true')


# found in review: multi_robot.launch.py took an overrides_file making vehicle_sim the reference
# clock, and both robots' vehicle_sims published /clock, each from 0
@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('overrides, refused', [
    (None, False), ('/**/vehicle_sim', True), ('/robot2/vehicle_sim', True),
    ('/robot3/vehicle_sim', False)])
def test_multi_robot_refuses_a_vehicle_sim_as_the_reference_clock(tmp_path, overrides, refused):
    from launch.launch_context import LaunchContext
    from launch.launch_description_sources.python_launch_file_utilities import (
        load_python_launch_file_as_module,
    )

    module = load_python_launch_file_as_module(str(LAUNCH_DIR / 'multi_robot.launch.py'))
    context = LaunchContext()
    context.launch_configurations.update({'robot1_preset': 'indoor_differential',
                                          'robot2_preset': 'mecanum_omni'})
    mine = tmp_path / 'mine.yaml'
    if overrides is not None:
        mine.write_text(f'{overrides}:\n  ros__parameters:\n    be_reference_clock: true\n')
        context.launch_configurations['overrides_file'] = str(mine)
    if not refused:
        assert module._no_reference_clock(context) == []
        return
    with pytest.raises(RuntimeError, match=f'{re.escape(str(mine))}: vehicle_sim.be_reference_'
                                           "clock: true would make each robot's vehicle_sim "
                                           'publish /clock, .*; nothing was started$'):
        module._no_reference_clock(context)


# found in review: nav2_bringup.launch.py applied wheelsim's stock overrides over the user's
# params file, replacing its clock_rate, pub_rate, footprint_frame, be_reference_clock silently
@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('in_file, refused', [
    ('    clock_rate: 100.0\n    pub_rate: 50.0\n',
     r"vehicle_sim\.clock_rate: 100\.0, which this launch sets to 20\.0; "
     r"vehicle_sim\.pub_rate: 50\.0, which this launch sets to 20\.0 \(.*stock_wheelsim\.yaml: "),
    ('    be_reference_clock: false\n', r'vehicle_sim\.be_reference_clock: False, which'),
    ('    clock_rate: 20.0\n    footprint_frame: base_footprint\n', None),
    ('    model: omni\n', None)], ids=['rates', 'clock', 'same', 'other'])
def test_nav2_bringup_refuses_a_params_file_setting_what_its_overrides_replace(
        tmp_path, in_file, refused):
    from launch.launch_context import LaunchContext
    from launch.launch_description_sources.python_launch_file_utilities import (
        load_python_launch_file_as_module,
    )

    module = load_python_launch_file_as_module(str(LAUNCH_DIR / 'nav2_bringup.launch.py'))
    mine = tmp_path / 'mine.yaml'
    mine.write_text('/**/vehicle_sim:\n  ros__parameters:\n' + in_file)
    context = LaunchContext()
    context.launch_configurations['params_file'] = str(mine)
    if refused is None:
        assert module._check_params_file(context) == []
    else:
        with pytest.raises(RuntimeError, match=f'^{re.escape(str(mine))}: {refused}.*remove '
                                               'them from the file; nothing was started$'):
            module._check_params_file(context)
    # a shipped preset is what the overrides are made for (all_vehicles: no reference clock),
    # wherever it is read from (found in review: a link to it or its source was refused)
    from wheelsim.shipped import shipped_params_dir

    preset = shipped_params_dir() / 'all_vehicles.yaml'
    (tmp_path / 'link.yaml').symlink_to(preset)
    (tmp_path / 'copy.yaml').write_bytes(preset.read_bytes())
    for path in (preset, tmp_path / 'link.yaml', tmp_path / 'copy.yaml',
                 REPO / 'params' / 'all_vehicles.yaml'):
        context.launch_configurations['params_file'] = str(path)
        assert module._check_params_file(context) == [], path
    (tmp_path / 'copy.yaml').write_text(preset.read_text() + '# mine\n')
    context.launch_configurations['params_file'] = str(tmp_path / 'copy.yaml')
    with pytest.raises(RuntimeError, match='be_reference_clock: False, which this launch sets'):
        module._check_params_file(context)


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
def test_sim_launch_publish_map_is_a_bool_that_a_params_file_may_not_contradict(tmp_path):
    """publish_map:= (what the Nav2 launch files set false: their map server serves map) gives
    vehicle_sim's world.publish_map; anything but true or false, or the other value in the
    params files, fails the launch naming both (no second map served, no map silently
    missing)."""
    spec = importlib.util.spec_from_file_location('wheelsim_sim_launch',
                                                  REPO / 'launch' / 'sim.launch.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    preset = str(PARAMS_DIR / 'indoor_differential.yaml')
    assert module._publish_map('false', [preset], '') is False
    assert module._publish_map('True', [preset], '') is True
    with pytest.raises(RuntimeError, match='publish_map:=no is invalid: must be one of true, 1, '
                                           'false, 0'):
        module._publish_map('no', [preset], '')
    publishing = tmp_path / 'publishing.yaml'
    publishing.write_text('/**/vehicle_sim:\n  ros__parameters:\n    world:\n'
                          '      publish_map: true\n')
    assert module._publish_map('true', [preset, str(publishing)], '') is True
    with pytest.raises(RuntimeError, match='publish_map:=false contradicts world.publish_map: '
                                           'true in .*publishing.yaml'):
        module._publish_map('false', [preset, str(publishing)], '')
    quoted = tmp_path / 'quoted.yaml'  # a text, not a bool: named as one
    quoted.write_text("/**/vehicle_sim:\n  ros__parameters:\n    world: {publish_map: 'false'}\n")
    with pytest.raises(RuntimeError, match="publish_map:=false contradicts world.publish_map: "
                                           "'false' in .*quoted.yaml"):
        module._publish_map('false', [preset, str(quoted)], '')
    quoted.write_text('/**/vehicle_sim:\n  ros__parameters:\n    world: {publish_map: 1}\n')
    with pytest.raises(RuntimeError, match='publish_map:=true contradicts world.publish_map: 1 '):
        module._publish_map('true', [preset, str(quoted)], '')  # 1 == True, but no bool


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('path', LAUNCH_FILES, ids=IDS)
def test_a_description_lists_its_arguments_without_wheelsim_installed(path, monkeypatch):
    """``ros2 launch <path>/FILE.launch.py --show-args`` with wheelsim only on PYTHONPATH, not
    in the ament index: the presets ``preset:=`` takes are looked up when the launch runs."""
    from ament_index_python.packages import get_package_prefix
    from launch.launch_description_sources import (
        get_launch_description_from_python_launch_file,
    )

    wheelsim_prefix = get_package_prefix('wheelsim')
    prefixes = os.environ['AMENT_PREFIX_PATH'].split(os.pathsep)
    assert wheelsim_prefix in prefixes
    monkeypatch.setenv('AMENT_PREFIX_PATH', os.pathsep.join(
        prefix for prefix in prefixes if prefix != wheelsim_prefix))
    description = get_launch_description_from_python_launch_file(str(path))
    names = {argument.name for argument in description.get_launch_arguments()}
    assert names >= set(parse_launch_file(path).arguments)


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
def test_preset_takes_the_shipped_presets_and_names_them_for_any_other():
    """What checked() offers ``preset:=`` (and multi_robot's ``robot<N>_preset:=``): the
    presets of the Python API."""
    from launch.launch_context import LaunchContext

    import wheelsim.sim as ws
    from wheelsim.bringup.arguments import checked

    assert list(ws.preset_names()) == PRESET_NAMES
    context = LaunchContext()
    for preset in PRESET_NAMES:
        context.launch_configurations['preset'] = preset
        checked(presets=['preset']).visit(context)
    context.launch_configurations['preset'] = 'tank'
    with pytest.raises(RuntimeError, match=re.escape(
            f'preset:=tank is invalid: must be one of {", ".join(PRESET_NAMES)}')):
        checked(presets=['preset']).visit(context)


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
def test_a_preset_is_an_installed_params_file_with_a_vehicle(tmp_path, monkeypatch):
    """The launch opens ``share/wheelsim/params/<preset>.yaml`` of the installed package: a
    preset is a params file there from which it can start a vehicle (a section naming
    vehicle_sim), not any YAML file nor one with only a ``/**`` section; a file ROS would refuse
    is offered (starting from it names its problem) and hides no other preset. With no preset
    there, the error says so."""
    from launch.launch_context import LaunchContext

    from wheelsim.bringup.arguments import checked

    (tmp_path / 'share' / 'ament_index' / 'resource_index' / 'packages').mkdir(parents=True)
    (tmp_path / 'share' / 'ament_index' / 'resource_index' / 'packages' / 'wheelsim').touch()
    params = tmp_path / 'share' / 'wheelsim' / 'params'
    params.mkdir(parents=True)
    (params / 'tank.yaml').write_text(
        '/**/vehicle_sim:\n  ros__parameters:\n    model: differential\n')
    (params / 'costmaps.yaml').write_text(
        'controller_server:\n  ros__parameters:\n    controller_frequency: 20.0\n')
    (params / 'common.yaml').write_text('/**:\n  ros__parameters:\n    use_sim_time: true\n')
    (params / 'mixed.yaml').write_text(  # an integer beside a double: rcl refuses the file
        'vehicle_sim:\n  ros__parameters:\n    planner:\n      waypoints: [1, 2.0]\n')
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path))
    context = LaunchContext()
    for preset in ('tank', 'mixed'):
        context.launch_configurations['preset'] = preset
        checked(presets=['preset']).visit(context)
    for other in ('costmaps', 'common'):
        context.launch_configurations['preset'] = other
        with pytest.raises(RuntimeError,
                           match=f'preset:={other} is invalid: must be one of mixed, tank$'):
            checked(presets=['preset']).visit(context)
    for path in params.iterdir():
        path.unlink()
    with pytest.raises(RuntimeError, match=re.escape(
            'preset:=common is invalid: no vehicle preset (a params file with a section for '
            f'vehicle_sim) in {params}')):
        checked(presets=['preset']).visit(context)


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('argv, mapping, label', [
    (['enable_button:=-2'], 'arcade', 'enable_button:=-2'),
    (['mapping:=tank', 'enable_button:=0', 'enable_button:=-2'], 'tank',
     'mapping:=tank enable_button:=-2'),
    ([], 'arcade', 'joy_teleop.launch.py'),  # the values of an including launch file
    # mapping:=tank typed, but an including launch file gave arcade: not what the launch used
    (['mapping:=tank', 'enable_button:=-2'], 'arcade', 'enable_button:=-2'),
])
def test_joy_teleop_names_the_arguments_given_on_the_command_line(argv, mapping, label):
    """A bad wheel_teleop parameter is said to come from the launch arguments the user gave,
    not from the defaults (``mapping:=arcade`` was named when only enable_button was given)."""
    from launch.launch_context import LaunchContext

    spec = importlib.util.spec_from_file_location('wheelsim_joy_teleop_launch',
                                                  REPO / 'launch' / 'joy_teleop.launch.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    context = LaunchContext(argv=argv)
    context.launch_configurations.update({'mapping': mapping, 'enable_button': '-2'})
    with pytest.raises(RuntimeError, match='^' + re.escape(
            f'{label}: wheel_teleop.enable_button: -2 must be an integer in [-1,')):
        module._teleop_parameters(context)


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('typed, used, named', [
    ('true', 'True', True), ('1', 'True', True), ('false', 'False', True), ('True', 'True', True),
    ('true', 'False', False),  # an including launch file gave false (nav2.launch.py)
    ('x', 'y', False)])
def test_a_boolean_is_named_as_typed_where_the_launch_uses_it(typed, used, named):
    """checked() makes a boolean argument True or False before an error names what was typed:
    ``publish_map:=true`` is still named, as typed, unless the launch used another value."""
    from launch.launch_context import LaunchContext

    from wheelsim.bringup.arguments import as_given

    context = LaunchContext(argv=[f'publish_map:={typed}'])
    context.launch_configurations['publish_map'] = used
    assert as_given(context, ['publish_map']) == ([f'publish_map:={typed}'] if named else [])


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('argv, params_file, refused', [
    (['preset:=forklift', 'params_file:=/a.yaml'], '/a.yaml', True),
    (['params_file:=/b.yaml', 'preset:=forklift', 'params_file:=/a.yaml'], '/a.yaml', True),
    (['preset:=forklift'], '/share/forklift.yaml', False),  # the preset's file: the default
    (['params_file:=/a.yaml'], '/a.yaml', False),
    # params_file:= typed, but an including launch file gave its own: the preset is not unused
    (['preset:=forklift', 'params_file:=/a.yaml'], '/share/forklift.yaml', False),
    # found in review: an empty one ran every node on its defaults, the preset unused
    (['preset:=forklift', 'params_file:='], '', 'empty'),
    (['params_file:= '], ' ', 'empty'),
    (['params_file:='], '/share/forklift.yaml', False)])
def test_a_preset_and_the_params_file_replacing_it_are_not_both_taken(argv, params_file,
                                                                      refused):
    """``params_file:=`` replaces the file ``preset:=`` chooses: given both on the command
    line, the launch fails naming both (the preset was silently unused)."""
    from launch.launch_context import LaunchContext

    from wheelsim.bringup.arguments import checked

    context = LaunchContext(argv=argv)
    context.launch_configurations.update({'preset': 'forklift', 'params_file': params_file})
    check = checked(presets=['preset'], replaced_by={'preset': 'params_file'})
    if not refused:
        check.visit(context)
        return
    message = (f"params_file:={params_file!r} is empty: give one, or leave params_file out for "
               "what preset chooses; nothing was started" if refused == 'empty' else
               'preset:=forklift and params_file:=/a.yaml: params_file replaces what preset '
               'chooses, so preset would be unused: give one of them')
    with pytest.raises(RuntimeError, match='^' + re.escape(message) + '$'):
        check.visit(context)


def test_a_numeric_launch_argument_that_is_no_number_names_the_argument():
    from wheelsim.bringup.arguments import number

    assert number('real_time_factor', '2.5') == 2.5
    assert number('device_id', '1', int) == 1
    with pytest.raises(RuntimeError, match='real_time_factor:=fast is invalid: must be a number'):
        number('real_time_factor', 'fast')
    with pytest.raises(RuntimeError, match='enable_button:=1.5 is invalid: must be an integer'):
        number('enable_button', '1.5', int)


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
def test_a_boolean_launch_argument_is_what_if_condition_takes_and_nothing_else():
    """launch 3.4 (Jazzy) IfCondition: true, 1, false, 0, any case, blanks around; ``checked``
    makes the configuration True or False (use_sim_time:=1 gives nodes a bool; Nav2's
    bring-up evaluates ``not <use_composition>`` as Python: ``false`` failed it, found by the
    stock Nav2 tests) and refuses anything else naming the argument, ``.lower() == 'true'`` took
    ``ture`` for false."""
    from launch.conditions import IfCondition
    from launch.launch_context import LaunchContext
    from launch.substitutions import LaunchConfiguration, PythonExpression

    from wheelsim.bringup.arguments import boolean, checked

    for text in ('true', 'True', ' TRUE ', '1', 'false', 'False', '0', ' 0'):
        context = LaunchContext()
        context.launch_configurations.update({'use_sim_time': text, 'real_time_factor': ''})
        expected = IfCondition(LaunchConfiguration('use_sim_time')).evaluate(context)
        assert boolean('use_sim_time', text) is expected
        checked(booleans=['use_sim_time'], numbers={'real_time_factor': float},
                optional=['real_time_factor']).visit(context)
        assert context.launch_configurations['use_sim_time'] == str(expected)
        negated = PythonExpression(['not ', LaunchConfiguration('use_sim_time')]).perform(context)
        assert negated == str(not expected)
    for text in ('ture', 'yes', 'on', '', '2'):
        with pytest.raises(RuntimeError, match=f'map_to_odom:={text} is invalid: must be one '
                                               'of true, 1, false, 0'):
            boolean('map_to_odom', text)


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('configurations, message', [
    ({'mapping': 'tnak'}, "mapping:=tnak is invalid: must be one of arcade, tank"),
    ({'log_level': 'loud'}, 'log_level:=loud is invalid: must be one of debug, info, warn'),
    ({'device_id': '1.5'}, 'device_id:=1.5 is invalid: must be an integer'),
    ({'real_time_factor': ''}, 'real_time_factor:= is invalid: must be a number'),
])
def test_checked_refuses_a_value_outside_the_argument_s_set_or_type(configurations, message):
    from launch.launch_context import LaunchContext

    from wheelsim.bringup.arguments import checked

    context = LaunchContext()
    check = checked(numbers={'device_id': int, 'real_time_factor': float},
                    choices={'mapping': ['arcade', 'tank']}, log_levels=['log_level'])
    context.launch_configurations.update(
        {'device_id': '0', 'real_time_factor': '2', 'mapping': 'tank', 'log_level': 'WARN'})
    check.visit(context)
    context.launch_configurations.update(configurations)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        check.visit(context)


# found in review: launch_ros refused a bad namespace naming no argument, once the launch ran
@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('text, outer, made, refused', [
    ('', None, '/', None), ('robot1', None, '/robot1', None), ('/robot1/', None, '/robot1', None),
    ('robot1', '/fleet', '/fleet/robot1', None), ('/robot1', '/fleet', '/robot1', None),
    ('1bad-ns', None, None, "namespace:=1bad-ns is invalid: namespace must not contain "
     "characters other than alphanumerics, '_', or '/' (the namespace '/1bad-ns'); nothing was "
     'started'),
    ('a//b', None, None, "namespace:=a//b is invalid: namespace must not contain repeated '/'"),
    ('robot 1', '/fleet', None, "(the namespace '/fleet/robot 1')")])
def test_checked_refuses_a_namespace_ros_refuses_naming_the_argument(text, outer, made, refused):
    from launch.launch_context import LaunchContext
    from launch.substitutions import TextSubstitution
    from launch_ros.actions import PushROSNamespace

    from wheelsim.bringup.arguments import checked

    def pushed():
        context = LaunchContext()
        if outer is not None:
            context.launch_configurations['ros_namespace'] = outer
        context.launch_configurations['namespace'] = text
        checked(namespaces=['namespace']).visit(context)
        PushROSNamespace(TextSubstitution(text=text)).visit(context)
        return context.launch_configurations['ros_namespace']

    if refused is None:
        assert pushed() == made
        return
    with pytest.raises(RuntimeError, match=re.escape(refused)):
        pushed()


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
def test_the_venv_s_ros2_launch_lists_the_arguments_as_ros2_launch_does():
    """Found in review: ``--show-args``, which bringup.md promises, was taken for a malformed
    ``name:=value`` argument (a traceback)."""
    done = subprocess.run([sys.executable, '-m', 'wheelsim.testing.ros2_launch', 'wheelsim',
                           'demo.launch.py', '--show-args'], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and 'Traceback' not in done.stderr, done.stderr
    assert "'preset':" in done.stdout and "'tracking':" in done.stdout, done.stdout


@pytest.mark.skipif(LAUNCH_PROBLEM is not None, reason=str(LAUNCH_PROBLEM))
@pytest.mark.parametrize('file_name, argv, refused', [
    ('nav2_bringup.launch.py', ['namespace:=/robot1'], True),
    ('nav2_bringup.launch.py', ['use_sim_time:=false'], True),
    ('nav2_bringup.launch.py', ['tracking:=true'], True),
    ('nav2_bringup.launch.py', ['frame_prefix:=r1/'], True),
    ('nav2_bringup.launch.py', ['map_yaml:=/m.yaml'], True),
    # found in review: what the launch gives the argument anyway was refused too, and a value
    # with blanks taken as the same failed later with launch_ros's own error
    ('nav2_bringup.launch.py', ['namespace:=/'], False),
    ('nav2_bringup.launch.py', ['namespace:='], False),
    ('nav2_bringup.launch.py', ['use_sim_time:=1'], False),
    ('nav2_bringup.launch.py', ['use_sim_time:= TRUE '], False),
    ('nav2_bringup.launch.py', ['tracking:=False'], False),
    ('nav2_bringup.launch.py', ['namespace:= / '], True),
    # found in review: blanks only were refused as if a namespace had been given, unseen
    ('nav2_bringup.launch.py', ['namespace:= '], True),
    ('nav2_bringup.launch.py', ['use_namespaced_tf:=true'], False),
    ('nav2_bringup.launch.py', [], False),
    ('nav2.launch.py', ['tracking:=false'], False), ('nav2.launch.py', ['tracking:=true'], True),
    ('nav2.launch.py', ['rviz_config:=/my.rviz'], True),
    ('demo.launch.py', ['tracking:=true'], False), ('demo.launch.py', ['tracking:=0'], True),
    ('multi_robot.launch.py', ['use_namespaced_tf:=false'], False),
    ('multi_robot.launch.py', ['use_namespaced_tf:=true'], True),
    ('multi_robot.launch.py', ['plotjuggler:=false'], False),
    ('multi_robot.launch.py', ['plotjuggler:=true'], True),
    ('multi_robot.launch.py', ['params_file:=/a.yaml'], True)])
def test_a_launch_file_refuses_what_it_sets_unless_it_is_the_same(file_name, argv, refused):
    """Each launch file's own REFUSED and HARMLESS, through ``checked``."""
    from launch.launch_context import LaunchContext
    from launch.launch_description_sources.python_launch_file_utilities import (
        load_python_launch_file_as_module,
    )

    from wheelsim.bringup.arguments import checked

    module = load_python_launch_file_as_module(str(LAUNCH_DIR / file_name))
    check = checked(refused=module.REFUSED, harmless=module.HARMLESS)
    context = LaunchContext(argv=argv)
    if not refused:
        check.visit(context)
        return
    name, _, text = argv[0].partition(':=')
    shown = f'{name}:={text!r}' if text != text.strip() else argv[0]
    with pytest.raises(RuntimeError, match=f'^{re.escape(shown)} is not taken by this launch '
                                           f'file: {re.escape(module.REFUSED[name])}; nothing '
                                           'was started$'):
        check.visit(context)


def test_the_light_nav2_launch_requires_the_packages_of_the_plugins_its_files_name(tmp_path):
    """Found in review: nav2.launch.py required Regulated Pure Pursuit whatever its
    nav2_params_file named, so a file naming another controller started no Nav2."""
    from wheelsim.bringup.nav2_plugins import plugin_packages

    reduced = PARAMS_DIR / 'nav2' / 'reduced.yaml'
    assert plugin_packages([str(reduced), '']) == [
        'nav2_bt_navigator', 'nav2_controller', 'nav2_regulated_pure_pursuit_controller',
        'nav2_costmap_2d', 'nav2_navfn_planner', 'nav2_behaviors']
    mine = tmp_path / 'mine.yaml'
    mine.write_text('controller_server:\n  ros__parameters:\n    FollowPath:\n      plugin: '
                    'nav2_graceful_controller::GracefulController\n    progress_checker:\n'
                    '      plugin: "nav2_controller/SimpleProgressChecker"\n')
    assert plugin_packages([str(mine)]) == ['nav2_graceful_controller', 'nav2_controller']
    mine.write_text('controller_server: [\n')
    with pytest.raises(RuntimeError, match=f'^{re.escape(str(mine))}: not a Nav2 params file '
                                           r'\(.*\); nothing was started$'):
        plugin_packages([str(mine)])
