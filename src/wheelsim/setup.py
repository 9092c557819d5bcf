"""ament_python package wheelsim; also installs the top-level launch/, params/, rviz/, plotjuggler/
and examples/ folders (an example's ../params/maps/room.yaml resolves in share/wheelsim/ too).

They are reached through links in this folder (``launch -> ../../launch``): every data file is
named inside the package, as colcon's ``--symlink-install`` needs (it links each data file into
``build/<package>/<name>``: a name starting ``../../`` would land beside the user's workspace).
"""

from pathlib import Path

from setuptools import find_packages, setup

package_name = 'wheelsim'


def share_files(folder: str) -> list[tuple[str, list[str]]]:
    """(install dir, files) per directory of a folder of the package (a link to a top-level one
    of the repository), installed under share/wheelsim/ with the same relative path
    (params/maps/room.yaml stays in params/maps/)."""
    entries: dict[str, list[str]] = {}
    for path in sorted(Path(folder).rglob('*')):
        if path.is_file() and '__pycache__' not in path.parts:
            entries.setdefault(f'share/{package_name}/{path.parent.as_posix()}', []).append(
                path.as_posix())
    return sorted(entries.items())


setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    package_data={package_name: ['py.typed', 'run/scenarios/*.yaml']},
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{package_name}']),
        (f'share/{package_name}',
         ['package.xml', 'fastdds_localhost.xml']),
        *share_files('launch'),
        *share_files('params'),
        *share_files('rviz'),
        *share_files('plotjuggler'),
        *share_files('examples'),
    ],
    install_requires=['setuptools'],
    zip_safe=False,
    maintainer='wheelsim developers',
    maintainer_email='wheelsim@example.com',
    description='Wheeled vehicle simulator for testing trajectory-following controllers',
    license='Apache-2.0',
    extras_require={'test': ['pytest', 'hypothesis']},
    entry_points={
        'console_scripts': [
            'vehicle_sim = wheelsim.nodes:vehicle_sim',
            'localization = wheelsim.nodes:localization',
            'planner = wheelsim.nodes:planner',
            'controller = wheelsim.nodes:controller',
            'wheel_teleop = wheelsim.nodes:wheel_teleop',
            'wheelsim = wheelsim.entry:main',
        ],
    },
)
