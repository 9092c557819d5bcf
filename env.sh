# Source this file (`source env.sh`) for a shell in which the wheelsim executables and Python
# packages work. Run `make test` or `make demo` once first: they create what this file uses.
#
# - With ROS 2 sourced (ROS_DISTRO set), that ROS is used; otherwise the venv of
#   WHEELSIM_DISTRO (jazzy by default, or kilted) with the PyPI wheels, .venv/<distro>, and the
#   generated tf2_msgs in .deps/<distro>. The workspace is built into install/<distro>.
# - The launch tooling of ../shared/ros-launch, when installed into that venv, is sourced too.
# - DDS stays on this machine: a Fast DDS profile binding only 127.0.0.1 (which also turns off
#   Fast DDS 3's type lookup service, whose teardown can crash a node: docs/reliability.md). Set
#   WHEELSIM_DDS_LOCALHOST=0 before sourcing to keep your own DDS settings (for example on a real
#   robot network).
# - ROS_DOMAIN_ID: kept if set, otherwise ROS's default (0), so that the nodes of two shells and
#   of the Docker services see each other. To keep a shell's nodes apart, export ROS_DOMAIN_ID
#   (0-101) first. The tests and benchmarks reserve their own; `wheelsim run` uses no DDS.

_wheelsim_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)"
if [ -n "${ROS_DISTRO:-}" ] && [ -n "${WHEELSIM_DISTRO:-}" ] && [ "$ROS_DISTRO" != "$WHEELSIM_DISTRO" ]; then
  echo "env.sh: WHEELSIM_DISTRO=$WHEELSIM_DISTRO but ROS 2 $ROS_DISTRO is sourced: unset one" >&2
fi
_wheelsim_distro="${ROS_DISTRO:-${WHEELSIM_DISTRO:-jazzy}}"
# A shell that sourced this file for one distro keeps its paths: sourcing it for the other would
# mix the two (a build or test then loads the first distro's packages), so that is refused.
case "${VIRTUAL_ENV:-}" in
  "$_wheelsim_root"/.venv/*)
    if [ -z "${ROS_DISTRO:-}" ] && [ "$VIRTUAL_ENV" != "$_wheelsim_root/.venv/$_wheelsim_distro" ]; then
      echo "env.sh: this shell has wheelsim's ${VIRTUAL_ENV##*/} environment: open a new shell" \
        "for $_wheelsim_distro (its paths would mix with ${VIRTUAL_ENV##*/}'s)" >&2
      export WHEELSIM_DISTRO="${VIRTUAL_ENV##*/}"  # the shell's, as before
      unset _wheelsim_root _wheelsim_distro
      return 2
    fi ;;
esac

if [ -z "${ROS_DISTRO:-}" ]; then
  _wheelsim_venv="$_wheelsim_root/.venv/$_wheelsim_distro"
  if [ -f "$_wheelsim_venv/bin/activate" ]; then
    # shellcheck disable=SC1091
    source "$_wheelsim_venv/bin/activate"
    export CMAKE_PREFIX_PATH="$VIRTUAL_ENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
    export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
  else
    echo "env.sh: no ROS 2 sourced and no $_wheelsim_venv yet: run 'make test' or 'make demo' first" >&2
  fi
  _wheelsim_deps="$_wheelsim_root/.deps/$_wheelsim_distro/install/tf2_msgs"
  if [ -d "$_wheelsim_deps" ]; then
    # The generated package's setup files do not extend these; do it here.
    _wheelsim_site="$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"].split("/lib/")[1])')"
    export AMENT_PREFIX_PATH="$_wheelsim_deps:$AMENT_PREFIX_PATH"
    export CMAKE_PREFIX_PATH="$_wheelsim_deps:$CMAKE_PREFIX_PATH"
    export PYTHONPATH="$_wheelsim_deps/lib/$_wheelsim_site:$_wheelsim_deps/local/lib/$_wheelsim_site${PYTHONPATH:+:$PYTHONPATH}"
    export LD_LIBRARY_PATH="$_wheelsim_deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  if [ -f "${VIRTUAL_ENV:-}/opt/ros-launch/install/local_setup.bash" ] && [ -n "${BASH_VERSION:-}" ]; then
    # launch tooling from ../shared/ros-launch (the launch tests run with it, and launch_run)
    # shellcheck disable=SC1091
    source "$VIRTUAL_ENV/opt/ros-launch/install/local_setup.bash"
  fi
fi

_wheelsim_install="$_wheelsim_root/install/$_wheelsim_distro"
if [ -f "$_wheelsim_install/setup.bash" ] && [ -n "${BASH_VERSION:-}" ]; then
  # shellcheck disable=SC1091
  source "$_wheelsim_install/setup.bash"
  # No `ros2` command without a ROS install: put the executables themselves on PATH.
  export PATH="$_wheelsim_install/wheelsim/lib/wheelsim:$PATH"
fi

if [ "${WHEELSIM_DDS_LOCALHOST:-1}" != 0 ]; then
  # The profile alone keeps every socket on 127.0.0.1. The automatic discovery range must not
  # also be limited to localhost through its ROS variable: with that, Fast DDS opens UDP sockets
  # on every interface, so an inherited setting of it is removed below.
  # Fast DDS 2 (Jazzy) reads only FASTRTPS_DEFAULT_PROFILES_FILE (without it, it discovers by
  # multicast on every interface); Fast DDS 3 (Kilted) reads FASTDDS_DEFAULT_PROFILES_FILE and
  # warns at every node's start that the other is deprecated when it is set: set the one the
  # distro reads (wheelsim.ros.dds_domain.profile_variables does the same in Python).
  _wheelsim_profile="$_wheelsim_root/tools/fastdds_localhost.xml"
  case "$_wheelsim_distro" in
    humble|iron|jazzy)
      export FASTRTPS_DEFAULT_PROFILES_FILE="$_wheelsim_profile"
      unset FASTDDS_DEFAULT_PROFILES_FILE ;;
    *)
      export FASTDDS_DEFAULT_PROFILES_FILE="$_wheelsim_profile"
      unset FASTRTPS_DEFAULT_PROFILES_FILE ;;
  esac
  unset _wheelsim_profile
  if [ "${ROS_AUTOMATIC_DISCOVERY_RANGE:-}" = LOCALHOST ]; then
    unset ROS_AUTOMATIC_DISCOVERY_RANGE
  fi
fi
export WHEELSIM_DISTRO="$_wheelsim_distro"
unset _wheelsim_root _wheelsim_deps _wheelsim_site _wheelsim_venv _wheelsim_install _wheelsim_distro
