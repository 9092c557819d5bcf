# Source this file (`source env.sh`) for a shell in which the wheelsim executables and Python
# packages work. Run `make test` or `make demo` once first: they create what this file uses.
#
# - With ROS 2 sourced (ROS_DISTRO set), that ROS is used; otherwise the .venv with the PyPI wheels
#   and the generated tf2_msgs in .deps/.
# - DDS stays on this machine: a Fast DDS profile binding only 127.0.0.1 and
#   ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST. Set WHEELSIM_DDS_LOCALHOST=0 before sourcing to keep
#   your own DDS settings (for example on a real robot network).
# - ROS_DOMAIN_ID: kept if set, otherwise a random one in 1..100 so two shells do not cross-talk.

_wheelsim_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)"

if [ -z "${ROS_DISTRO:-}" ]; then
  if [ -f "$_wheelsim_root/.venv/bin/activate" ]; then
    # shellcheck disable=SC1091
    source "$_wheelsim_root/.venv/bin/activate"
    export CMAKE_PREFIX_PATH="$VIRTUAL_ENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
    export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
  else
    echo "env.sh: no ROS 2 sourced and no .venv yet: run 'make test' or 'make demo' first" >&2
  fi
  _wheelsim_deps="$_wheelsim_root/.deps/install/tf2_msgs"
  if [ -d "$_wheelsim_deps" ]; then
    # The generated package's setup files do not extend these; do it here.
    _wheelsim_site="$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"].split("/lib/")[1])')"
    export AMENT_PREFIX_PATH="$_wheelsim_deps:$AMENT_PREFIX_PATH"
    export CMAKE_PREFIX_PATH="$_wheelsim_deps:$CMAKE_PREFIX_PATH"
    export PYTHONPATH="$_wheelsim_deps/lib/$_wheelsim_site:$_wheelsim_deps/local/lib/$_wheelsim_site${PYTHONPATH:+:$PYTHONPATH}"
    export LD_LIBRARY_PATH="$_wheelsim_deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi

if [ -f "$_wheelsim_root/install/setup.bash" ] && [ -n "${BASH_VERSION:-}" ]; then
  # shellcheck disable=SC1091
  source "$_wheelsim_root/install/setup.bash"
  # No `ros2` command without a ROS install: put the executables themselves on PATH.
  export PATH="$_wheelsim_root/install/wheelsim/lib/wheelsim:$PATH"
fi

if [ "${WHEELSIM_DDS_LOCALHOST:-1}" != 0 ]; then
  export FASTDDS_DEFAULT_PROFILES_FILE="$_wheelsim_root/tools/fastdds_localhost.xml"
  export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
fi
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$((RANDOM % 100 + 1))}"
unset _wheelsim_root _wheelsim_deps _wheelsim_site
