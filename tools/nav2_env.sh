# Source after env.sh for a shell with Nav2 (venv set-up): the prefix `make setup` found or
# unpacked (tools/nav2_prefix.sh, recorded in .deps/<distro>/nav2-prefix). With a ROS install,
# whose Nav2 comes with `source /opt/ros/<distro>/setup.bash`, this does nothing.
#
#   source env.sh && source tools/nav2_env.sh
if [ -z "${ROS_DISTRO:-}" ]; then
  _wheelsim_nav2_record="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.deps/${WHEELSIM_DISTRO:-jazzy}/nav2-prefix"
  _wheelsim_nav2="$(cat "$_wheelsim_nav2_record" 2>/dev/null || echo 'none: run make setup first')"
  case "$_wheelsim_nav2" in
    none:*)
      # The Nav2 tests name this reason in the test summary.
      export WHEELSIM_NAV2_NONE="${_wheelsim_nav2#none: }"
      echo "tools/nav2_env.sh: no Nav2 here ($WHEELSIM_NAV2_NONE)" >&2 ;;
    *)
      unset WHEELSIM_NAV2_NONE
      if [ -f "$_wheelsim_nav2/nav2_env.sh" ]; then
        # shellcheck disable=SC1091
        source "$_wheelsim_nav2/nav2_env.sh"
      else
        # shellcheck disable=SC1091
        source "$_wheelsim_nav2/local_setup.bash"
      fi ;;
  esac
  unset _wheelsim_nav2 _wheelsim_nav2_record
fi
