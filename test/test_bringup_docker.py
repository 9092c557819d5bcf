"""Docker image and compose services: name only files, launch arguments and packages that exist.

No Docker engine here, so the files are read: the Dockerfile builds from the official ROS image
with a ROS_DISTRO argument (Jazzy default), installs every package the launch files start and every
Python package the nodes need, and the compose services run commands that exist.
"""

import os
import re

import pytest
import yaml
from bringup_support import (
    EXTERNAL_EXECUTABLES,
    REPO,
    command_problems,
    parse_launch_file,
    process_sources,
)

DOCKERFILE = REPO / 'docker' / 'Dockerfile'
COMPOSE = REPO / 'docker-compose.yml'
#: tools/requirements-common.txt entries that are build or test tooling, not run by the nodes.
TOOLING = {'colcon-common-extensions', 'pytest', 'hypothesis', 'ruff', 'urdf-parser-py',
           'pytest-random-order', 'pytest-xdist',
           'commonroad-vehicle-models'}  # the last: a test's reference
APT_NAMES = {'pyyaml': 'python3-yaml', 'pillow': 'python3-pil'}  # Ubuntu's and rosdep's names


def dockerfile_text() -> str:
    return DOCKERFILE.read_text().replace('\\\n', ' ')


def dockerfile_instructions() -> list[tuple[str, str]]:
    lines = [line.strip() for line in dockerfile_text().splitlines()]
    return [tuple(line.split(None, 1)) for line in lines if line and not line.startswith('#')]


def test_image_is_the_official_ros_image_with_a_distro_argument_defaulting_to_jazzy():
    instructions = dockerfile_instructions()
    first_from = next(i for i, (op, _) in enumerate(instructions) if op == 'FROM')
    assert ('ARG', 'ROS_DISTRO=jazzy') in instructions[:first_from]
    assert instructions[first_from] == ('FROM', 'ros:${ROS_DISTRO}')
    assert ('ARG', 'ROS_DISTRO') in instructions[first_from:], 'ROS_DISTRO unusable after FROM'


def pip_specs() -> list[str]:
    """The requirement specifiers of every ``pip3 install`` of the Dockerfile, in order (its
    options left out; a range is quoted for the shell: 'rosbags>=0.11.9,<0.12')."""
    return [spec.strip('\'"') for line in re.findall(r'pip3 install ([^&]+)', dockerfile_text())
            for spec in line.split() if not spec.startswith('-')]


def apt_packages() -> set[str]:
    return set(re.findall(r'(?<![\w-])(ros-\$\{ROS_DISTRO\}-[a-z0-9-]+|python3-[a-z0-9-]+|'
                          r'xterm)(?![\w-])', dockerfile_text()))


def test_image_installs_every_package_the_launch_files_start():
    packages = apt_packages()
    for path in process_sources():
        for node in parse_launch_file(path).nodes:
            if node.package != 'wheelsim':
                apt = 'ros-${ROS_DISTRO}-' + EXTERNAL_EXECUTABLES[(node.package, node.executable)]
                assert apt in packages, f'{path.name}: {node.package} ({apt}) is not installed'
    assert 'xterm' in packages, 'teleop.launch.py opens the keyboard node in xterm'


def test_image_installs_every_python_package_the_nodes_need():
    # a pinned version: rsplan==1.0.10; a range, quoted for the shell: 'rosbags>=0.11.9,<0.12'
    pip = [re.split(r'[=<>]', spec)[0] for spec in pip_specs()]
    packages = apt_packages()
    lines = [line for name in ('requirements-common.txt', 'requirements-kilted.txt')
             for line in (REPO / 'tools' / name).read_text().splitlines()]
    for line in lines:
        name = re.split(r'[=<>\[ #;]', line.strip())[0].lower()  # ';': an environment marker
        if not name or name.startswith(('ros-', '-r')) or name in TOOLING:
            continue
        apt = APT_NAMES.get(name, f'python3-{name}')
        assert apt in packages or name in pip, f'{name} is neither apt-installed nor pip-installed'


def test_image_copies_existing_files_and_builds_from_the_repository_root():
    instructions = dockerfile_instructions()
    for op, argument in instructions:
        if op == 'COPY':
            source = argument.split()[0]
            assert (REPO / source).exists(), f'COPY {source}: no such file'
    workdir = [a for op, a in instructions if op == 'WORKDIR']
    assert workdir == ['/wheelsim']
    assert ('COPY', '. /wheelsim') in instructions
    assert 'colcon build --base-paths src' in dockerfile_text()


def test_entrypoint_sources_ros_and_the_workspace():
    entrypoint = REPO / 'docker' / 'entrypoint.sh'
    assert os.access(entrypoint, os.X_OK)
    text = entrypoint.read_text()
    assert 'source "/opt/ros/${ROS_DISTRO}/setup.bash"' in text
    assert 'source /wheelsim/install/setup.bash' in text and 'exec "$@"' in text


def test_dockerignore_keeps_local_build_trees_out_of_the_image():
    ignored = set((REPO / '.dockerignore').read_text().split())  # the classic builder's place
    assert {'.venv', '.deps', 'build', 'install', 'log', '.git'} <= ignored


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_has_the_issue_s_services():
    assert {'sim', 'demo', 'nav2', 'rviz', 'plotjuggler', 'teleop'} <= set(compose()['services'])


@pytest.mark.parametrize('service', sorted(compose()['services']))
def test_compose_service_builds_the_image_and_runs_an_existing_command(service):
    spec = compose()['services'][service]
    build = spec['build']
    assert (REPO / build['context'] / build['dockerfile']).is_file()
    # The image's distro has its own variable: a host's ROS_DISTRO (Humble...) must not leak in.
    assert build['args']['ROS_DISTRO'] == '${WHEELSIM_ROS_DISTRO:-jazzy}'
    assert spec['image'] == 'wheelsim:${WHEELSIM_ROS_DISTRO:-jazzy}'
    assert '${ROS_DISTRO' not in COMPOSE.read_text()
    assert spec['network_mode'] == 'host', 'DDS between services and with the host'
    # Root-owned shared memory is unreadable for host users: UDP only, no shared IPC needed.
    assert spec['environment']['FASTDDS_BUILTIN_TRANSPORTS'] == 'UDPv4'
    assert 'ipc' not in spec
    assert not command_problems(spec['command']), command_problems(spec['command'])


@pytest.mark.parametrize('service', ['rviz', 'rviz_nav2', 'rviz_nav2_stock', 'plotjuggler'])
def test_compose_gui_services_reach_the_x_server(service):
    spec = compose()['services'][service]
    assert spec['environment']['DISPLAY'].startswith('${DISPLAY')
    assert '/tmp/.X11-unix:/tmp/.X11-unix:rw' in spec['volumes']


def test_the_rviz_beside_nav2_opens_the_nav2_launch_files_view():
    """Found in review: `docker compose up nav2 rviz` opened wheelsim.rviz, whose latched Path
    display cannot match Nav2's volatile plan (and which has no costmaps nor Nav2 panel)."""
    services = compose()['services']
    for launch_file in ('nav2.launch.py', 'nav2_bringup.launch.py'):
        assert "'nav2.rviz'" in (REPO / 'launch' / launch_file).read_text(), launch_file
    assert services['rviz_nav2']['command'] == 'rviz2 -d /wheelsim/rviz/nav2.rviz'
    assert services['rviz']['command'] == 'rviz2 -d /wheelsim/rviz/wheelsim.rviz'
    # found in review: the RViz beside nav2_stock, whose nodes run on vehicle_sim's /clock, ran
    # on the wall clock and stamped its goals 1.8e9 s ahead
    assert "'use_sim_time': 'true'" in (REPO / 'launch' / 'nav2_bringup.launch.py').read_text()
    assert services['rviz_nav2_stock']['command'] == (
        'rviz2 -d /wheelsim/rviz/nav2.rviz --ros-args -p use_sim_time:=true')
    assert services['rviz_nav2']['profiles'] == ['nav2']
    assert services['rviz_nav2_stock']['profiles'] == ['nav2_stock']
    for doc in (COMPOSE, REPO / 'README.md', REPO / 'docs' / 'bringup.md',
                REPO / 'docs' / 'development.md'):
        paired = re.findall(r'docker compose up (nav2\w*)\s+(rviz\w*)', doc.read_text())
        assert all(rviz == f'rviz_{nav2}' for nav2, rviz in paired), (doc, paired)


# found in review: `docker compose stop` (and Ctrl-C in `up`) sent SIGTERM to ros2 launch, the
# container's first process; launch cancelled itself without stopping its nodes and the kernel
# killed them with the container. SIGINT to a non-interactive launch's process alone stops every
# node (test_bringup_launch_run.py stops its launches so).
@pytest.mark.parametrize('service', [name for name, spec in compose()['services'].items()
                                     if spec['command'].startswith('ros2 launch')])
def test_compose_stops_a_launch_as_ctrl_c_does(service):
    spec = compose()['services'][service]
    assert spec['command'].startswith('ros2 launch -n wheelsim '), spec['command']
    assert spec['stop_signal'] == 'SIGINT'
    # launch's SIGTERM comes 5 s after its SIGINT, its SIGKILL at 10 s
    assert int(spec['stop_grace_period'].removesuffix('s')) >= 15


def test_compose_passes_software_rendering_to_the_gui_services():
    """bringup.md: without a GPU, set LIBGL_ALWAYS_SOFTWARE=1 (found in review: the services'
    environment did not take it from the host shell)."""
    assert compose()['services']['rviz']['environment']['LIBGL_ALWAYS_SOFTWARE'] == (
        '${LIBGL_ALWAYS_SOFTWARE:-0}')
    assert 'set `LIBGL_ALWAYS_SOFTWARE=1`' in (REPO / 'docs' / 'bringup.md').read_text()


def test_the_dockerfile_s_docker_run_uses_udp_as_compose_does():
    """Found in review: its example shared the host's IPC, the shared memory a host user cannot
    open (see the compose services' FASTDDS_BUILTIN_TRANSPORTS)."""
    [example] = re.findall(r'#\s+docker run [^\n]*', dockerfile_text())
    assert '--ipc' not in example and '-e FASTDDS_BUILTIN_TRANSPORTS=UDPv4' in example, example
    # `docker stop`: SIGINT, which launch passes on; its SIGTERM would orphan the nodes
    assert '--stop-signal SIGINT' in example, example


def test_compose_teleop_gets_a_terminal():
    spec = compose()['services']['teleop']
    assert spec['stdin_open'] and spec['tty']


def test_command_check_catches_wrong_arguments_files_and_executables():
    assert command_problems('ros2 launch wheelsim demo.launch.py rviz:=false presett:=x')
    assert command_problems('ros2 launch wheelsim demo.launch.py preset:=${P:-no_such_preset}')
    assert command_problems('ros2 launch -n wheelsim demo.launch.py presett:=x')
    assert command_problems('rviz2 -d /wheelsim/rviz/missing.rviz')
    assert command_problems('ros2 run teleop_twist_keyboard teleop_twist_joy')
    assert not command_problems('ros2 launch wheelsim demo.launch.py preset:=forklift rviz:=1')


def test_image_takes_numba_from_pip_and_ships_a_warm_kernel_cache():
    # Ubuntu 24.04 (noble), the base of ros:jazzy and ros:kilted, has no python3-numba.
    assert 'python3-numba' not in apt_packages()
    assert 'numba' in pip_specs()
    assert 'python3 -m wheelsim.core.warm_up' in dockerfile_text()
    assert 'python3 -m wheelsim.report.warm_up' in dockerfile_text()


#: Python packages of Ubuntu 24.04 (noble, the base of ros:jazzy and ros:kilted) in the image, at
#: noble's versions: colcon, matplotlib and rclpy bring them, and pip cannot uninstall them.
NOBLE_DEBIAN_VERSIONS = {'packaging': '24.0', 'typing-extensions': '4.10.0'}


# found in review: ray 2.60.0 needs packaging >= 24.2 and gymnasium 1.4.0 typing-extensions >=
# 4.12; pip stopped the image's build trying to uninstall noble's older Debian packages
def test_image_installs_newer_python_packages_beside_noble_s_before_what_needs_them():
    from importlib.metadata import distribution

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    beside = {}  # installed with --ignore-installed: name -> (specifier, pip3 install's number)
    pinned_in = {}  # the others pinned with ==: specifier text -> pip3 install's number
    for number, line in enumerate(re.findall(r'pip3 install ([^&]+)', dockerfile_text())):
        specs = [spec.strip('\'"') for spec in line.split() if spec[0] != '-']
        if '--ignore-installed' in line.split():
            beside.update((canonicalize_name(Requirement(spec).name),
                           (Requirement(spec).specifier, number)) for spec in specs)
        else:
            pinned_in.update((spec, number) for spec in specs if '==' in spec)
    needed = []
    for spec in pinned_in:
        pinned = Requirement(spec)
        metadata = distribution(pinned.name)  # the venv's: the same version as the image's
        assert pinned.specifier.contains(metadata.version), (spec, metadata.version)
        for text in metadata.requires or []:
            required = Requirement(text)
            noble = NOBLE_DEBIAN_VERSIONS.get(canonicalize_name(required.name))
            if noble and (required.marker is None or required.marker.evaluate({'extra': ''})) \
                    and not required.specifier.contains(noble):
                needed.append((spec, str(required)))
    assert needed, 'the packages pinned no longer need newer ones than noble\'s: check the table'
    for spec, requirement in needed:
        required = Requirement(requirement)
        given, number = beside.get(canonicalize_name(required.name), (None, None))
        assert given is not None and number < pinned_in[spec] and any(
            required.specifier.contains(version) for version in given_floor(given)), (
            f'{spec} needs {requirement}, newer than noble\'s; install it with pip3 install '
            '--ignore-installed first')


def given_floor(specifier) -> list[str]:
    """The lowest versions a ``>=`` specifier allows (what pip may install at the least)."""
    return [item.version for item in specifier if item.operator == '>=']
