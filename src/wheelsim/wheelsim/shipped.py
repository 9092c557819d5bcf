"""Where the files wheelsim ships are found: the vehicle presets (params files) and the maps.

The installed package's ``share/wheelsim/params`` (``maps/`` in it), as a launch file's
``FindPackageShare`` finds it; the repository's ``params/`` where no installed wheelsim is found
(no ROS, or run from the source tree before ``colcon build``).
"""

from __future__ import annotations

from pathlib import Path


def shipped_params_dir() -> Path:
    """The folder of the shipped params files (the presets) and, in ``maps/``, maps."""
    source_tree = Path(__file__).resolve().parents[3] / 'params'
    try:
        from ament_index_python.packages import (
            PackageNotFoundError,
            get_package_share_directory,
        )
    except ImportError:  # no ROS: the source tree is all there is
        return source_tree
    try:
        return Path(get_package_share_directory('wheelsim')) / 'params'
    except PackageNotFoundError:
        return source_tree


def shipped_map(name: str) -> Path:
    """``maps/<name>.yaml`` of the shipped params."""
    return shipped_params_dir() / 'maps' / f'{name}.yaml'


def shipped_map_names() -> list[str]:
    """The names :func:`shipped_map` finds a file for, sorted."""
    return sorted(path.stem for path in (shipped_params_dir() / 'maps').glob('*.yaml'))
