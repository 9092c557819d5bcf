"""The ROS 2 distribution this process runs on."""

import os


def ros_distro() -> str:
    """``ROS_DISTRO`` (a sourced ROS 2), else ``WHEELSIM_DISTRO`` (env.sh's venv of PyPI wheels,
    which sets no ``ROS_DISTRO``), else '' (unknown)."""
    return os.environ.get('ROS_DISTRO') or os.environ.get('WHEELSIM_DISTRO', '')
