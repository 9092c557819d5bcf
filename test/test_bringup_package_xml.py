"""package.xml: every rosdep key resolves on Ubuntu 24.04 for Jazzy and Kilted, and every package
a launch file starts or loads is an exec_depend, so `rosdep install --from-paths src` brings them.

The keys were checked against ros/rosdistro at 8468e88 (2026-08-22): ROS packages released in
both jazzy/distribution.yaml and kilted/distribution.yaml, system keys in rosdep/base.yaml and
rosdep/python.yaml with an Ubuntu entry. ``python3-numba`` resolves to an apt package Ubuntu
24.04 does not have, and ``python3-mcap-ros2-support-pip`` is no key at all: both must stay out.
"""

import re
import xml.etree.ElementTree as ET

from bringup_support import (
    EXTERNAL_EXECUTABLES,
    PACKAGE_DIR,
    REPO,
    parse_launch_file,
    process_sources,
)

#: Released in both distros (rosdistro 8468e88): jazzy / kilted versions in the comment.
ROS_PACKAGES_IN_BOTH_DISTROS = {
    'rclpy',  # 7.1.11 / 9.1.6
    'ament_index_python', 'builtin_interfaces', 'rcl_interfaces', 'diagnostic_msgs',
    'geometry_msgs', 'nav_msgs', 'rosgraph_msgs', 'sensor_msgs', 'std_msgs', 'std_srvs',
    'tf2_msgs', 'tf2_ros', 'launch', 'launch_ros', 'robot_state_publisher',
    'rviz2',  # 14.1.23 / 15.0.14
    'plotjuggler_ros',  # 2.3.1 / 2.3.1
    'teleop_twist_keyboard',  # 2.4.1 / 2.4.1
    'joy',  # 3.3.0 / 3.3.0
    'nav2_map_server', 'nav2_lifecycle_manager', 'nav2_controller', 'nav2_planner',
    'nav2_behaviors', 'nav2_bt_navigator', 'nav2_regulated_pure_pursuit_controller',
    'nav2_navfn_planner', 'nav2_costmap_2d', 'nav2_bringup',  # navigation2 1.3.13 / 1.4.2
    'urdfdom_py',  # 1.2.1 / 1.2.1
    'rosidl_parser',  # rosidl 4.6.9 / 4.9.8 (ros/cdr.py reads message definitions)
}
#: rosdep/base.yaml and rosdep/python.yaml keys with an entry for every Ubuntu release.
SYSTEM_KEYS_FOR_UBUNTU = {
    'python3-numpy', 'python3-scipy', 'python3-matplotlib', 'python3-yaml', 'python3-tqdm',
    'python3-pytest', 'python3-hypothesis', 'python3-rosbags-pip', 'xterm',
    'python3-pil',  # rosdep/python.yaml:6405-6422 (ubuntu: python3-pil)
}
#: Nav2 plugins named in params/nav2/reduced.yaml, by package.
NAV2_PLUGIN_PACKAGES = {'nav2_regulated_pure_pursuit_controller', 'nav2_navfn_planner',
                        'nav2_costmap_2d'}


def dependencies(kind: str) -> set[str]:
    root = ET.parse(PACKAGE_DIR / 'package.xml').getroot()
    return {element.text.strip() for element in root.iter(kind)}


def test_every_key_resolves_on_ubuntu_24_04_for_both_distros():
    keys = dependencies('exec_depend') | dependencies('test_depend') | dependencies('depend')
    unknown = keys - ROS_PACKAGES_IN_BOTH_DISTROS - SYSTEM_KEYS_FOR_UBUNTU
    assert not unknown, f'keys not checked against rosdistro (or not resolvable): {unknown}'
    assert 'python3-numba' not in keys


def test_every_package_a_launch_file_starts_or_loads_is_an_exec_depend():
    needed = {'launch', 'launch_ros'} | NAV2_PLUGIN_PACKAGES
    for path in process_sources():
        for node in parse_launch_file(path).nodes:
            if node.package != 'wheelsim':
                needed.add('plotjuggler_ros' if node.package == 'plotjuggler' else node.package)
    assert needed <= dependencies('exec_depend'), needed - dependencies('exec_depend')
    assert 'xterm' in dependencies('exec_depend'), 'teleop.launch.py opens an xterm'
    nav2_text = (REPO / 'params' / 'nav2' / 'reduced.yaml').read_text()
    for package in NAV2_PLUGIN_PACKAGES:
        assert f'{package}::' in nav2_text, package
    assert {package for package, _ in EXTERNAL_EXECUTABLES} - {'plotjuggler'} <= (
        dependencies('exec_depend'))


def test_every_package_whose_files_a_launch_file_reads_is_an_exec_depend():
    """Found in review: nav2_bringup.launch.py includes nav2_bringup's bringup_launch.py and
    reads its nav2_params.yaml, and nav2_bringup was no exec_depend."""
    shared = set()
    for path in sorted((REPO / 'launch').glob('*.launch.py')):
        shared |= set(re.findall(r"(?:FindPackageShare\(|_share\(context, )'(\w+)'",
                                 path.read_text()))
    assert 'nav2_bringup' in shared
    assert shared - {'wheelsim'} <= dependencies('exec_depend'), (
        shared - dependencies('exec_depend'))
