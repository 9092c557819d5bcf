"""ament_python package wheelsim; also installs the top-level launch/, params/ and rviz/ folders."""

from glob import glob
from pathlib import Path

from setuptools import find_packages, setup

package_name = 'wheelsim'
repo_root = Path('..', '..')


def share_files(folder: str) -> tuple[str, list[str]]:
    """(install dir, files) for a top-level repository folder installed into share/wheelsim/."""
    files = sorted(p for p in glob(str(repo_root / folder / '**' / '*'), recursive=True)
                   if Path(p).is_file())
    return (f'share/{package_name}/{folder}', files)


setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    package_data={package_name: ['py.typed', 'scenarios/*.yaml']},
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{package_name}']),
        (f'share/{package_name}',
         ['package.xml', str(repo_root / 'tools' / 'fastdds_localhost.xml')]),
        share_files('launch'),
        share_files('params'),
        share_files('rviz'),
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
            'vehicle_sim = wheelsim.nodes.vehicle_sim:main',
            'localization = wheelsim.nodes.localization:main',
            'planner = wheelsim.nodes.planner:main',
            'controller = wheelsim.nodes.controller:main',
            'wheelsim = wheelsim.cli.main:main',
        ],
    },
)
