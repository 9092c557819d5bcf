#!/usr/bin/env bash
# Run the command with ROS 2 and the wheelsim workspace sourced (the image's entry point).
set -e
# shellcheck disable=SC1090,SC1091
source "/opt/ros/${ROS_DISTRO}/setup.bash"
# shellcheck disable=SC1091
source /wheelsim/install/setup.bash
exec "$@"
