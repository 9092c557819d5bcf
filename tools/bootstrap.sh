#!/usr/bin/env bash
# Set up everything `make demo` and `make test` need, skipping what is already done.
#
# Without a sourced ROS 2 (no ROS_DISTRO): a virtual environment .venv with the ROS 2 Kilted wheels
# from PyPI, a generated tf2_msgs (PyPI has none) in .deps/, then `colcon build` of the workspace.
# With ROS 2 Jazzy or Kilted sourced: only `colcon build` (plus the Python packages the system
# lacks, installed for the user with pip if missing).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/.venv"
deps="$root/.deps"
python_bin="${PYTHON:-python3}"

log() { printf '[setup] %s\n' "$*"; }

fix_wheel_cmake_paths() {
  # The wheels' CMake export files name the build host's Python paths; point them at ours.
  local include purelib
  include="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  purelib="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  grep -rlE '/opt/python/cp3[0-9]+-cp3[0-9]+' "$venv/share" --include='*.cmake' 2>/dev/null \
    | xargs -r sed -i -E \
      -e "s#/opt/python/cp3[0-9]+-cp3[0-9]+/include/python3\.[0-9]+#${include}#g" \
      -e "s#/opt/python/cp3[0-9]+-cp3[0-9]+/lib/python3\.[0-9]+/site-packages#${purelib}#g" \
    || true
}

setup_venv() {
  local stamp="$venv/.wheelsim-requirements"
  if [ -f "$stamp" ] && cmp -s "$stamp" tools/requirements-venv.txt; then
    return
  fi
  log "creating $venv with the ROS 2 wheels from PyPI (first run only, about a minute)"
  [ -x "$venv/bin/python" ] || "$python_bin" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip 2>>"$deps/pip.log"
  "$venv/bin/python" -m pip install --quiet -r tools/requirements-venv.txt 2>>"$deps/pip.log" \
    || { log "pip install failed; see $deps/pip.log"; tail -n 20 "$deps/pip.log"; exit 1; }
  fix_wheel_cmake_paths
  cp tools/requirements-venv.txt "$stamp"
}

build_tf2_msgs() {
  # Built only when no tf2_msgs is importable (a system ROS install has the real one).
  if python -c 'import tf2_msgs.msg' 2>/dev/null; then
    return
  fi
  log "generating tf2_msgs into $deps (first run only, a few seconds)"
  local include
  include="$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  (
    export CMAKE_PREFIX_PATH="$venv${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export AMENT_PREFIX_PATH="$venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
    colcon --log-base "$deps/log" build --base-paths tools/tf2_msgs \
      --build-base "$deps/build" --install-base "$deps/install" \
      --cmake-args -DPython3_EXECUTABLE="$venv/bin/python" -DPython3_INCLUDE_DIR="$include" \
      -DBUILD_TESTING=OFF >"$deps/build.log" 2>&1
  ) || { log "tf2_msgs generation failed; see $deps/build.log"; tail -n 30 "$deps/build.log"; exit 1; }
}

mkdir -p "$deps"
if [ -n "${ROS_DISTRO:-}" ]; then
  log "using the sourced ROS 2 $ROS_DISTRO"
  missing=$(python3 - <<'EOF'
import importlib.util
mods = {'numba': 'numba', 'mcap_ros2': 'mcap-ros2-support', 'mcap': 'mcap', 'hypothesis': 'hypothesis',
        'ruff': 'ruff', 'urdf_parser_py': 'urdf-parser-py'}
print(' '.join(pkg for mod, pkg in mods.items() if importlib.util.find_spec(mod) is None))
EOF
)
  if [ -n "$missing" ]; then
    log "installing for the user with pip: $missing"
    python3 -m pip install --user --quiet $missing || python3 -m pip install --user --quiet --break-system-packages $missing
  fi
else
  setup_venv
  set +u  # the sourced setup files use unset variables
  # shellcheck disable=SC1091
  source "$root/env.sh"
  set -u
  build_tf2_msgs
fi

set +u
# shellcheck disable=SC1091
source "$root/env.sh"
set -u
log "building the workspace with colcon"
colcon build --base-paths src --symlink-install >"$deps/colcon-build.log" 2>&1 \
  || { log "colcon build failed; see $deps/colcon-build.log"; tail -n 40 "$deps/colcon-build.log"; exit 1; }
